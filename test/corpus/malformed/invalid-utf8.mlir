// a UTF-8 byte order mark, then ÿþ not UTF-8
func.func @main() {
}
