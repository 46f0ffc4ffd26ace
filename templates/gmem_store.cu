//@ accept
// Store-only format: each row of y is written by exactly one unit over all parts (checked when
// designed), so the result is stored and y is not zeroed first.
if (IN_ROW >= 0) y[A_origin_row(IN_ROW)] = IN_V;
