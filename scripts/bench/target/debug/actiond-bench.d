/work/main/scripts/bench/target/debug/actiond-bench: /work/main/scripts/bench/src/main.rs
