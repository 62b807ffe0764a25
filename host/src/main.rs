fn main() {
    let path = std::env::args().nth(1).unwrap();
    let wasm = std::fs::read(&path).unwrap();
    let mut program = weft::runtime::Program::load(&wasm, Default::default()).unwrap();
    let mut sched: Box<dyn weft::sched::Scheduler> = Box::new(weft::sched::RandomScheduler::new(1));
    for seed in 0..20 {
        sched = Box::new(weft::sched::RandomScheduler::new(seed));
        let t = std::time::Instant::now();
        let (r, s) = program.execute(sched, &Default::default());
        sched = s;
        println!("{seed}: {:?} steps={} decisions={} {:?} out={:?}", r.outcome, r.steps, r.decisions.len(), t.elapsed(), String::from_utf8_lossy(&r.stdout));
    }
}
