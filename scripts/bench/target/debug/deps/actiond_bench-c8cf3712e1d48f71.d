/work/main/scripts/bench/target/debug/deps/actiond_bench-c8cf3712e1d48f71.d: src/main.rs

/work/main/scripts/bench/target/debug/deps/actiond_bench-c8cf3712e1d48f71: src/main.rs

src/main.rs:
