# Tab completes globals, table fields and methods.
. tests/lib.sh
repl_start
send -l 'gpu.inf'
send Tab
wait_for 'gpu.info' || die "gpu.inf did not complete: $(screen)"
send C-u
send -l 'cplx_obj = setmetatable({}, {__index = {frobnicate = 1}})'
send Enter
send -l 'cplx_obj.frob'
send Tab
wait_for 'cplx_obj.frobnicate' || die "__index method not completed: $(screen)"
exit 0
