//! The `mempursuit` command-line program: select, eval, demo, bench.

mod bench;

fn main() {
    let _ = bench::run;
    println!("mempursuit: under construction");
}
