//! The RAPL reader against a fake powercap tree (this CI machine has none).

use std::path::Path;
use std::time::{Duration, Instant};

use clustercrypt_bench::power::{Rapl, Source};
use clustercrypt_bench::report::PowerSource;

fn zone(root: &Path, dir: &str, name: &str, energy: u64, max: u64) {
    let d = root.join(dir);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("name"), format!("{name}\n")).unwrap();
    std::fs::write(d.join("energy_uj"), format!("{energy}\n")).unwrap();
    std::fs::write(d.join("max_energy_range_uj"), format!("{max}\n")).unwrap();
}

fn set_energy(root: &Path, dir: &str, energy: u64) {
    std::fs::write(root.join(dir).join("energy_uj"), format!("{energy}\n")).unwrap();
}

const MAX: u64 = 262_143_328_850;

#[test]
fn no_tree_means_no_source() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Rapl::open(&dir.path().join("powercap")).unwrap().is_none());
    assert!(Rapl::open(dir.path()).unwrap().is_none());
}

#[test]
fn packages_only_with_wrap_around() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    zone(root, "intel-rapl:0", "package-0", 1_000_000, MAX);
    // A package's sub-zone (its cores) is part of the package: not counted twice.
    zone(root, "intel-rapl:0:0", "core", 500_000, MAX);
    zone(root, "intel-rapl:1", "package-1", MAX - 500_000, MAX);
    zone(root, "intel-rapl-mmio:0", "package-0", 7, MAX);
    let rapl = Rapl::open(root).unwrap().expect("two packages");
    assert_eq!(rapl.names, ["package-0", "package-1"]);
    let before = rapl.read().unwrap();
    assert_eq!(before, [1_000_000, MAX - 500_000]);

    let t0 = Instant::now();
    let session = Source::Rapl(rapl.clone()).start().unwrap();
    // 2 J on package 0; package 1 wraps past its range: 0.5 J + 0.5 J.
    set_energy(root, "intel-rapl:0", 3_000_000);
    set_energy(root, "intel-rapl:0:0", 9_000_000);
    set_energy(root, "intel-rapl:1", 500_000);
    std::thread::sleep(Duration::from_millis(100));
    let watts = session.finish().unwrap();
    let elapsed = t0.elapsed().as_secs_f64();
    assert!(
        watts <= 3.0 / 0.1 && watts >= 3.0 / elapsed,
        "{watts} W over {elapsed} s"
    );
    assert_eq!(rapl.used_uj(&before, &rapl.read().unwrap()), 3_000_000);
    assert_eq!(Source::Rapl(rapl).kind(), PowerSource::Rapl);
}

#[test]
fn unreadable_counters_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    zone(dir.path(), "intel-rapl:0", "package-0", 1, MAX);
    std::fs::write(dir.path().join("intel-rapl:0/energy_uj"), "n/a\n").unwrap();
    assert!(Rapl::open(dir.path()).is_err());
    std::fs::remove_file(dir.path().join("intel-rapl:0/energy_uj")).unwrap();
    let e = Rapl::open(dir.path()).unwrap_err().to_string();
    assert!(e.contains("energy_uj"), "{e}");
}

#[test]
fn watts_command_is_sampled_during_the_workload() {
    let s = Source::Command {
        command: "echo 'power: 12.5 W'".into(),
        interval: Duration::from_millis(20),
    };
    let session = s.start().unwrap();
    std::thread::sleep(Duration::from_millis(70));
    assert_eq!(session.finish().unwrap(), 12.5);
    let bad = Source::Command {
        command: "echo no reading".into(),
        interval: Duration::from_secs(1),
    };
    let e = bad.start().unwrap().finish().unwrap_err().to_string();
    assert!(e.contains("printed no number"), "{e}");
    let failing = Source::Command {
        command: "exit 3".into(),
        interval: Duration::from_secs(1),
    };
    assert!(failing.start().unwrap().finish().is_err());
}
