#!/usr/bin/env python3
"""One line per `sparsetune --json tune` output: what the search measured and where its time went.

usage: scripts/search-stats.py FILE.json ...
"""
import json
import sys


def main(paths):
    print("| matrix | candidates | structures | stopped by | sample: candidates / structures / s"
          " | confirmed / s | measure s (worker setup / check / timed) | design / NVRTC thread-s |")
    print("|---|---:|---:|---|---|---|---|---|")
    for p in paths:
        try:
            j = json.load(open(p))
        except (OSError, ValueError) as e:
            print(f"| {p} | unreadable: {e} |")
            continue
        s = j.get("search", {})
        sc = s.get("screened_on_sample", {})
        st = sc.get("sample_stage_seconds") or s.get("stage_seconds", {})
        name = p.split("/")[-1].replace("-tune.json", "").replace(".json", "")
        sample = (f"{sc.get('sample_candidates')} / {sc.get('sample_structures')} / "
                  f"{sc.get('sample_seconds', 0):.1f}") if sc else "-"
        conf = f"{sc.get('confirmed_candidates')} / {sc.get('confirm_seconds', 0):.1f}" if sc else "-"
        meas = (f"{st.get('measure_s', 0):.1f} ({st.get('worker_setup_s', 0):.1f} / "
                f"{st.get('worker_check_s', 0):.1f} / {st.get('worker_timed_s', 0):.1f})")
        prep = f"{st.get('design_thread_s', 0):.1f} / {st.get('compile_thread_s', 0):.1f}"
        print(f"| {name} | {s.get('candidates')} | {s.get('structures')} | {s.get('stopped_by')} |"
              f" {sample} | {conf} | {meas} | {prep} |")


if __name__ == "__main__":
    main(sys.argv[1:])
