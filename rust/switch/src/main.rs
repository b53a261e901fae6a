use sdnperf_switch::{load_program, stf};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;

fn usage() -> ! {
    eprintln!(
        "usage:\n  sdnperf-switch stf PROGRAM(.json|.p4) TEST.stf\n  sdnperf-switch run --json PROG.json -i N@IFACE ... [--cpu-port N] [--ctl HOST:PORT | --ctl-socket PATH] [--impair N:delay=5ms,...] [--no-vnet]\n  sdnperf-switch ctl (HOST:PORT|SOCKET) COMMAND... | -f FILE\n  sdnperf-switch check PROGRAM"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        usage();
    }
    match args[1].as_str() {
        "stf" => {
            if args.len() != 4 {
                usage();
            }
            let prog = match load_program(&args[2]) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: {}", e);
                    std::process::exit(2);
                }
            };
            let text = match std::fs::read_to_string(&args[3]) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {}: {}", args[3], e);
                    std::process::exit(2);
                }
            };
            let mut sw = Switch::new(Engine::new(prog));
            let r = stf::run(&mut sw, &text);
            print!("{}", r.report);
            std::process::exit(if r.passed { 0 } else { 1 });
        }
        "check" => {
            if args.len() != 3 {
                usage();
            }
            match load_program(&args[2]) {
                Ok(p) => println!("ok: {} headers, {} tables, {} actions", p.headers.len(), p.tables.len(), p.actions.len()),
                Err(e) => {
                    eprintln!("error: {}", e);
                    std::process::exit(2);
                }
            }
        }
        _ => usage(),
    }
}
