//@ accept
// Each row of y is written by exactly one unit of this kernel (checked when designed).
if (IN_ROW >= 0) y[A_origin_row(IN_ROW)] += IN_V;
