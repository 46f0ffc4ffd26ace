//@ to_warp
// adapter: a lane's result (registers) joins the warp-level reduction
//@ to_block
// adapter: a result (registers) goes to the block-level reduction in shared memory
//@ to_global
// adapter: a result goes to y in global memory
//@ side
// adapter: a finished row goes to the nearest non-collective level
