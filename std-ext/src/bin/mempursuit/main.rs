//! The `mempursuit` command-line program: select, eval, demo, bench.

fn main() {
    println!("mempursuit: under construction");
}
