# Tab completes our objects' fields (d.r -> d.rows), adds no space after a table or function
# name, and completes file names inside a string argument.
. tests/lib.sh
mkdir -p "$T/files" && : >"$T/files/iris_copy.csv"
repl_start
type_line 'd = data.load("datasets/iris.csv", {target = "species"});'
send -l 'd.ro'
send Tab
wait_for 'gwb> d.rows' || die "d.ro did not complete to d.rows: $(screen)"
send Enter
wait_for_re '^150$' || die "d.rows: $(screen)"
# no space after a table name: "gpu" then "." goes on directly
send -l 'rf.trai'
send Tab
send -l '(d, {trees = 2, progress = false}).trees'
wait_for 'gwb> rf.train(d, {trees = 2' || die "a space after rf.train: $(screen)"
send Enter
wait_for_re '^2$' || die "rf.trai<Tab>( did not give rf.train(: $(screen)"
# nor after a table name
send -l 'tea'
send Tab
send -l '.layout ~= nil'
wait_for 'gwb> teach.layout ~= nil' || die "a space after the table teach: $(screen)"
send Enter
wait_for_re '^true$' || die "teach.layout ~= nil: $(screen)"
# file names inside a string
send -l "x = io.open(\"$T/files/iris_c"
send Tab
wait_for "$T/files/iris_copy.csv" || die "file name not completed: $(screen)"
exit 0
