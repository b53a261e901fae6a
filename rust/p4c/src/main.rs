fn main() {
    eprintln!("sdnperf-p4c: not implemented yet");
    std::process::exit(1);
}
