"""One GPU's measured operator graphs in a `sparsetune db export`, as the predict-only scripts
(spmv-predict-list.py, spmv-predict-proxy.py) read them. Times of different GPUs do not compare,
so both take one device's: the one asked for, or the one with the most measurements."""
import collections
import json


def pick_device(db, wanted=None):
    """(device, measurements per device); ValueError naming the devices when `wanted` is absent."""
    devices = collections.Counter(m["device"] for m in db["measurements"])
    device = wanted or (devices.most_common(1)[0][0] if devices else "")
    if device not in devices:
        raise ValueError(f"no measurements of device '{device}' (the export has: "
                         f"{', '.join(sorted(devices)) or 'none'})")
    return device, devices


def measured_graphs(db, device):
    """Fingerprint -> the device's verified, timed operator-graph measurements of that matrix
    (cuSPARSE rows, predictions and failures left out)."""
    out = collections.defaultdict(list)
    for m in db["measurements"]:
        if (m["device"] == device and m["ok"] and m["candidate"].startswith("graph/")
                and m["time_us"] > 0 and not json.loads(m["params"]).get("predicted")):
            out[m["fingerprint"]].append(m)
    return out
