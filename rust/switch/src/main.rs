fn main() {
    eprintln!("sdnperf-switch: not implemented yet");
    std::process::exit(1);
}
