//! HPL: input planning as the Pi cluster study tuned it, the input file, reading
//! a real hpcc output, and (where hpcc and mpirun are installed) a real run.

use std::path::PathBuf;

use clustercrypt_bench::hpl::{
    self, DEFAULT_NB, Hosts, Launch, Overrides, Program, grid, parse_hpcc_output, parse_hpl_table,
    plan, render_input,
};

const GIB: u64 = 1 << 30;

/// The rules: P x Q = processes, P <= Q, no squarer factorisation exists, N a
/// multiple of NB whose matrix fits 80% of memory and the next one does not.
fn check_rules(cores: usize, mem: u64, nodes: usize) {
    let p = plan(cores, mem, nodes, &Overrides::default()).unwrap();
    let procs = (cores * nodes) as u64;
    assert_eq!(p.p * p.q, procs, "{cores}x{nodes}");
    assert!(p.p <= p.q);
    assert!(
        (p.p + 1..=p.q).all(|d| d * d > procs || !procs.is_multiple_of(d)),
        "{cores} cores: {}x{} is not the squarest grid",
        p.p,
        p.q
    );
    assert_eq!(p.nb, DEFAULT_NB);
    assert_eq!(p.n % p.nb, 0);
    let budget = 0.8 * (mem * nodes as u64) as f64;
    assert!((8 * p.n * p.n) as f64 <= budget);
    let next = p.n + p.nb;
    assert!((8 * next * next) as f64 > budget);
    // About 80% of memory: within one block row of the budget.
    assert!(
        (8 * p.n * p.n) as f64 > 0.9 * budget,
        "{cores} cores {mem} bytes"
    );
}

#[test]
fn plans_follow_the_study_rules() {
    for cores in [1, 2, 4, 6, 8, 16, 80] {
        for gib in [1, 2, 4, 8, 16, 24, 64] {
            check_rules(cores, gib * GIB, 1);
        }
    }
    check_rules(4, GIB, 6);
    check_rules(4, GIB, 8);
}

#[test]
fn known_plans() {
    let d = Overrides::default();
    // One 2-core machine with 24 GiB (this kind of CI machine).
    let p = plan(2, 24 * GIB, 1, &d).unwrap();
    assert_eq!((p.p, p.q, p.processes), (1, 2, 2));
    assert_eq!(p.n, 50_688); // 264 x 192; sqrt(0.8 * 24 GiB / 8) = 50 761
    // The NUC (6 cores, 8 GiB) and the MRD (8 cores, 16 GiB) of the study.
    let nuc = plan(6, 8 * GIB, 1, &d).unwrap();
    assert_eq!((nuc.p, nuc.q, nuc.n), (2, 3, 29_184));
    let mrd = plan(8, 16 * GIB, 1, &d).unwrap();
    assert_eq!((mrd.p, mrd.q, mrd.n), (2, 4, 41_280));
    // The study's cluster: 20 Raspberry Pi 3 B+ of 4 cores and 1 GiB. The study
    // used P = 10, Q = 8 and "80% of total available memory": with Q >= P the
    // grid is 8 x 10, and N = 46 272 (sqrt(0.8 * 20 GiB / 8) = 46 341).
    let pi = plan(4, GIB, 20, &d).unwrap();
    assert_eq!((pi.p, pi.q, pi.processes, pi.nodes), (8, 10, 80, 20));
    assert_eq!(pi.n, 46_272);
    assert_eq!(pi.total_memory_bytes, 20 * GIB);
    // One Pi 3 B+: 2 x 2 grid, N = 10 176 = 53 x 192 (sqrt(0.8 GiB / 8) = 10 362).
    let one = plan(4, GIB, 1, &d).unwrap();
    assert_eq!((one.p, one.q), (2, 2));
    assert_eq!(one.n, 10_176);
    assert_eq!(grid(7), (1, 7));
}

#[test]
fn overrides_win_and_bad_ones_are_refused() {
    let o = Overrides {
        n: Some(1000),
        nb: Some(80),
        p: Some(1),
        q: Some(2),
        ..Default::default()
    };
    let p = plan(2, 24 * GIB, 1, &o).unwrap();
    assert_eq!((p.n, p.nb, p.p, p.q, p.processes), (1000, 80, 1, 2, 2));
    let procs = plan(
        2,
        GIB,
        1,
        &Overrides {
            processes: Some(6),
            memory_fraction: Some(0.5),
            nb: Some(128),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((procs.p, procs.q), (2, 3));
    assert_eq!(procs.n, 8192); // sqrt(0.5 GiB / 8) = 8192 exactly, a multiple of 128
    for bad in [
        Overrides {
            p: Some(2),
            ..Default::default()
        },
        Overrides {
            p: Some(2),
            q: Some(2),
            processes: Some(3),
            ..Default::default()
        },
        Overrides {
            memory_fraction: Some(1.5),
            ..Default::default()
        },
        Overrides {
            memory_fraction: Some(0.0),
            ..Default::default()
        },
        Overrides {
            nb: Some(0),
            ..Default::default()
        },
        Overrides {
            n: Some(20_000), // 3.2 GB of matrix on a 1 GiB machine
            ..Default::default()
        },
        Overrides {
            processes: Some(0),
            ..Default::default()
        },
    ] {
        assert!(plan(2, GIB, 1, &bad).is_err(), "{bad:?}");
    }
    assert!(plan(0, GIB, 1, &Overrides::default()).is_err());
    // Too little memory for one block.
    assert!(plan(1, 1000, 1, &Overrides::default()).is_err());
}

#[test]
fn input_file_has_the_plan_on_the_lines_hpl_reads() {
    let p = plan(4, GIB, 20, &Overrides::default()).unwrap();
    let text = render_input(&p, Program::Hpcc);
    let lines: Vec<&str> = text.lines().collect();
    let example = std::fs::read_to_string("/usr/share/doc/hpcc/examples/_hpccinf.txt").ok();
    // HPL reads values by line number: same count and order as hpcc's example.
    assert_eq!(lines.len(), 36);
    let value = |i: usize| lines[i].split_whitespace().next().unwrap();
    assert_eq!(value(3), "8");
    assert_eq!(value(4), "1");
    assert_eq!(value(5), "46272");
    assert!(lines[5].ends_with("Ns"));
    assert_eq!(value(6), "1");
    assert_eq!(value(7), "192");
    assert!(lines[7].ends_with("NBs"));
    assert_eq!(value(9), "1");
    assert_eq!(value(10), "8");
    assert!(lines[10].ends_with("Ps"));
    assert_eq!(value(11), "10");
    assert!(lines[11].ends_with("Qs"));
    assert!(lines[31].starts_with("#####"));
    if let Some(example) = example {
        // Everything but the title, N, NB, P and Q is the example's.
        let ex: Vec<&str> = example.lines().collect();
        assert_eq!(ex.len(), lines.len());
        for (i, (a, b)) in lines.iter().zip(&ex).enumerate() {
            if ![1, 5, 7, 10, 11].contains(&i) {
                assert_eq!(
                    a.split_whitespace().collect::<Vec<_>>(),
                    b.split_whitespace().collect::<Vec<_>>(),
                    "line {}",
                    i + 1
                );
            }
        }
    }
    let xhpl = render_input(&p, Program::Xhpl);
    assert_eq!(
        xhpl.lines().nth(3).unwrap().split_whitespace().next(),
        Some("6")
    );
}

#[test]
fn reads_a_real_hpcc_output() {
    // Captured from Debian's hpcc 1.5.0 with OpenBLAS: N=1000, NB=80, 1 x 2 ranks.
    let text = include_str!("data/hpccoutf_n1000_2ranks.txt");
    let out = parse_hpcc_output(text).unwrap();
    assert!((out.gflops - 72.5418).abs() < 1e-9, "{}", out.gflops);
    assert_eq!((out.n, out.nb, out.p, out.q), (1000, 80, 1, 2));
    assert_eq!(out.processes, Some(2));
    assert!((out.seconds - 0.00921078).abs() < 1e-12);
    assert!(out.passed);
    assert_eq!(out.program, "hpcc 1.5.0");
    // The HPL section alone is what a standalone xhpl prints.
    let table = parse_hpl_table(text).unwrap();
    assert_eq!((table.n, table.nb, table.p, table.q), (1000, 80, 1, 2));
    assert!((table.gflops - 72.54).abs() < 1e-9);
    assert!(table.passed);
    assert_eq!(table.program, "HPL 2.0");
    // A failed residual check or suite is not a pass.
    let failed = text.replace("0.0039687 ...... PASSED", "99.0 ...... FAILED");
    assert!(!parse_hpcc_output(&failed).unwrap().passed);
    assert!(!parse_hpl_table(&failed).unwrap().passed);
    assert!(
        !parse_hpcc_output(&text.replace("Success=1", "Success=0"))
            .unwrap()
            .passed
    );
    // A run that died before the summary has no figure.
    assert!(parse_hpcc_output(&text[..text.find("Begin of Summary").unwrap()]).is_err());
    assert!(parse_hpl_table("nothing here").is_err());
}

#[test]
fn mpirun_command_line() {
    let p = plan(2, GIB, 1, &Overrides::default()).unwrap();
    let mut l = Launch {
        mpirun: PathBuf::from("mpirun"),
        program: PathBuf::from("hpcc"),
        kind: Program::Hpcc,
        hosts: Hosts::Local,
        slots: 2,
        extra_args: vec![],
    };
    assert_eq!(l.args(&p), ["-np", "2", "hpcc"]);
    let more = plan(
        2,
        GIB,
        1,
        &Overrides {
            processes: Some(4),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(l.args(&more), ["-np", "4", "--oversubscribe", "hpcc"]);
    l.hosts = Hosts::List {
        hosts: vec!["10.0.0.1".into(), "10.0.0.2".into()],
        slots: 4,
    };
    l.slots = 8;
    l.extra_args = vec!["--mca".into(), "btl".into(), "tcp,self".into()];
    let cluster = plan(4, GIB, 2, &Overrides::default()).unwrap();
    assert_eq!(
        l.args(&cluster),
        [
            "-np",
            "8",
            "--host",
            "10.0.0.1:4,10.0.0.2:4",
            "--mca",
            "btl",
            "tcp,self",
            "hpcc"
        ]
    );
    assert!(l.command_line(&cluster).contains("mpirun -np 8 --host"));
    assert_eq!(
        Hosts::count_in_hostfile("# nodes\nnode1 slots=4\n\nnode2 # b\n"),
        2
    );
    assert_eq!(
        Program::from_path("/opt/hpl/bin/xhpl".as_ref()),
        Program::Xhpl
    );
    assert_eq!(Program::from_path("hpcc".as_ref()), Program::Hpcc);
}

#[test]
fn missing_programs_are_named() {
    let p = plan(1, GIB, 1, &Overrides::default()).unwrap();
    let l = Launch {
        mpirun: PathBuf::from("mpirun"),
        program: PathBuf::from("no-such-hpl-program"),
        kind: Program::Hpcc,
        hosts: Hosts::Local,
        slots: 1,
        extra_args: vec![],
    };
    if hpl::which("mpirun".as_ref()).is_none() {
        return;
    }
    let e = hpl::run(&p, &l).unwrap_err().to_string();
    assert!(e.contains("no-such-hpl-program not found"), "{e}");
    assert!(e.contains("apt-get install hpcc openmpi-bin"), "{e}");
}

/// A real HPL run with a tiny N. Skipped (with a notice) only when hpcc or
/// mpirun is missing; CI installs them.
#[test]
fn real_hpcc_run() {
    if hpl::which("hpcc".as_ref()).is_none() || hpl::which("mpirun".as_ref()).is_none() {
        eprintln!("NOTICE: hpcc or mpirun not installed; skipping the real HPL run");
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let p = plan(
        cores.min(2),
        GIB,
        1,
        &Overrides {
            n: Some(500),
            nb: Some(64),
            ..Default::default()
        },
    )
    .unwrap();
    let l = Launch {
        mpirun: PathBuf::from("mpirun"),
        program: PathBuf::from("hpcc"),
        kind: Program::Hpcc,
        hosts: Hosts::Local,
        slots: cores,
        extra_args: vec![],
    };
    let r = hpl::run(&p, &l).unwrap();
    assert!(r.gflops > 0.0, "{r:?}");
    assert_eq!((r.n, r.nb, r.p, r.q), (500, 64, p.p, p.q));
    assert_eq!(r.processes, p.processes);
    assert!(r.passed);
    assert!(r.program.starts_with("hpcc "), "{}", r.program);
}
