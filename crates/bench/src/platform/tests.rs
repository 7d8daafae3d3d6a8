use std::sync::Mutex;

use super::*;

/// A core at a fixed clock: running cycles moves its own time forward.
struct FakeCore {
    mhz: f64,
    nanos: Mutex<f64>,
}

impl FakeCore {
    fn new(mhz: f64) -> FakeCore {
        FakeCore {
            mhz,
            nanos: Mutex::new(0.0),
        }
    }
}

impl Clock for FakeCore {
    fn now(&self) -> Duration {
        Duration::from_nanos(*self.nanos.lock().unwrap() as u64)
    }
}

impl CycleSource for FakeCore {
    fn run(&self, iterations: u64) -> Option<u64> {
        let cycles = iterations * 64;
        *self.nanos.lock().unwrap() += cycles as f64 * 1000.0 / self.mhz;
        Some(cycles)
    }
}

struct NoLoop;
impl CycleSource for NoLoop {
    fn run(&self, _: u64) -> Option<u64> {
        None
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn clock_from_a_fake_core() {
    for mhz in [1800.0, 2208.0, 3700.0] {
        let core = FakeCore::new(mhz);
        let got = measure_mhz(&core, &core).unwrap();
        assert!((got - mhz).abs() < 1e-3 * mhz, "{got} vs {mhz}");
    }
    let core = FakeCore::new(1000.0);
    assert_eq!(measure_mhz(&core, &NoLoop), None);
}

#[test]
fn the_real_loop_gives_a_plausible_clock() {
    let clock = crate::clock::MonotonicClock::default();
    if let Some(mhz) = measure_mhz(&clock, &DependentAdds) {
        // Shared machines preempt us; the best trial still lands in range.
        assert!((200.0..8000.0).contains(&mhz), "{mhz} MHz");
    }
}

#[test]
fn cycles_per_byte_at_the_clock() {
    // Pi 4 Adiantum: 160 MiB/s at 1800 MHz is about 10.7 c/B.
    let c = cycles_per_byte(1800.0, 160.0, 1).unwrap();
    assert!((c - 1800e6 / (160.0 * 1_048_576.0)).abs() < 1e-9);
    assert!((c - 10.73).abs() < 0.01);
    // Four workers sharing an aggregate use four cores' cycles.
    assert!((cycles_per_byte(1800.0, 640.0, 4).unwrap() - c).abs() < 1e-9);
    assert_eq!(cycles_per_byte(0.0, 1.0, 1), None);
    assert_eq!(cycles_per_byte(1.0, 0.0, 1), None);
}

#[test]
fn clock_sources_and_cpufreq_cross_check() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "sys/devices/system/cpu/cpu2/cpufreq/scaling_cur_freq",
        "2208000\n",
    );
    write(
        dir.path(),
        "sys/devices/system/cpu/cpu2/cpufreq/cpuinfo_max_freq",
        "2400000\n",
    );
    let root = SysRoot::at(dir.path());
    let f = cpufreq_mhz(&root, 2);
    assert_eq!(f, (Some(2208.0), Some(2400.0)));
    assert_eq!(cpufreq_mhz(&root, 0), (None, None));
    let r = clock_record(None, Some(2200.0), f).unwrap();
    assert_eq!(
        (r.mhz, r.source.as_str(), r.note),
        (2200.0, "measured", None)
    );
    let r = clock_record(None, Some(1500.0), f).unwrap();
    assert!(r.note.unwrap().contains("2208"));
    let r = clock_record(Some(1800.0), Some(2200.0), f).unwrap();
    assert_eq!((r.mhz, r.source.as_str()), (1800.0, "override"));
    let r = clock_record(None, None, f).unwrap();
    assert_eq!((r.mhz, r.source.as_str()), (2208.0, "scaling_cur_freq"));
    assert_eq!(clock_record(None, None, (None, None)), None);
}

/// A Pi 3B+ heating up: 1400 MHz, then capped to 1200 MHz above 60 °C.
fn pi3_sequence() -> Vec<&'static str> {
    vec![
        "600000 5000\n1200000 100\n1400000 300\n",
        // Row 1: 2 s all at 1400 MHz (and a governor blip of 10 ms at 600).
        "600000 5001\n1200000 100\n1400000 500\n",
        // Row 2: 1.2 s at 1400, 0.8 s at 1200: throttled.
        "600000 5001\n1200000 180\n1400000 620\n",
        // Row 3: all at 1200: a steady lower clock is not a drop within the row.
        "600000 5001\n1200000 380\n1400000 620\n",
    ]
}

fn snapshot(dir: &Path, tis: &str) -> FreqSnapshot {
    write(
        dir,
        "sys/devices/system/cpu/cpufreq/policy0/affected_cpus",
        "0 1 2 3\n",
    );
    write(
        dir,
        "sys/devices/system/cpu/cpufreq/policy0/stats/time_in_state",
        tis,
    );
    FreqSnapshot::read(&SysRoot::at(dir))
}

#[test]
fn throttled_rows_from_a_recorded_time_in_state_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let snaps: Vec<FreqSnapshot> = pi3_sequence()
        .into_iter()
        .map(|t| snapshot(dir.path(), t))
        .collect();
    assert_eq!(snaps[0].0[0].cpus, vec![0, 1, 2, 3]);
    let rows: Vec<FreqWindow> = snaps
        .windows(2)
        .map(|w| freq_window(&w[0], &w[1], &[0]).unwrap())
        .collect();
    assert!(!rows[0].dropped());
    assert_eq!((rows[0].min_mhz, rows[0].max_mhz), (600.0, 1400.0));
    assert!(rows[1].dropped());
    assert_eq!((rows[1].min_mhz, rows[1].max_mhz), (1200.0, 1400.0));
    assert!((rows[1].share_below - 0.4).abs() < 1e-12);
    assert!(!rows[2].dropped());
    assert_eq!((rows[2].min_mhz, rows[2].max_mhz), (1200.0, 1200.0));
    // Another policy's CPUs: nothing about them.
    assert_eq!(freq_window(&snaps[1], &snaps[2], &[4]), None);
    // No cpufreq (a VM): no window.
    let empty = FreqSnapshot::read(&SysRoot::at("/nonexistent"));
    assert_eq!(freq_window(&empty, &empty, &[]), None);
}

#[test]
fn temperature_and_vcgencmd() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "sys/class/thermal/thermal_zone0/temp",
        "48312\n",
    );
    write(
        dir.path(),
        "sys/class/thermal/thermal_zone1/temp",
        "61000\n",
    );
    write(
        dir.path(),
        "sys/class/thermal/cooling_device0/cur_state",
        "1\n",
    );
    assert_eq!(temperature_c(&SysRoot::at(dir.path())), Some(61.0));
    assert_eq!(temperature_c(&SysRoot::at("/nonexistent")), None);
    assert_eq!(parse_get_throttled("throttled=0x50005\n"), Some(0x50005));
    assert_eq!(parse_get_throttled("throttled=0x0"), Some(0));
    assert_eq!(parse_get_throttled("error"), None);
    assert!(throttled_now(0x50005));
    assert!(!throttled_now(0x50000));
}

#[test]
fn idleness_from_proc() {
    let dir = tempfile::tempdir().unwrap();
    let stat = |pid: u32, name: &str, utime: u64, stime: u64| {
        format!(
            "{pid} ({name}) S 1 1 1 0 -1 4194560 100 0 0 0 {utime} {stime} 0 0 20 0 1 0 100 1000 100 0 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n"
        )
    };
    write(dir.path(), "proc/loadavg", "0.03 0.10 0.08 1/120 999\n");
    write(dir.path(), "proc/10/stat", &stat(10, "sshd", 5, 5));
    write(
        dir.path(),
        "proc/20/stat",
        &stat(20, "my (odd) name", 100, 0),
    );
    write(dir.path(), "proc/self/stat", "not a pid");
    let root = SysRoot::at(dir.path());
    assert_eq!(
        parse_stat(&stat(20, "my (odd) name", 100, 7)).unwrap(),
        ("my (odd) name".into(), 107, Some(3))
    );
    let before = proc_ticks(&root);
    assert_eq!(before.len(), 2);
    // One second later: process 20 used 50 ticks (50% of a core), process 10 one tick.
    write(dir.path(), "proc/10/stat", &stat(10, "sshd", 6, 5));
    write(
        dir.path(),
        "proc/20/stat",
        &stat(20, "my (odd) name", 130, 20),
    );
    let after = proc_ticks(&root);
    let load = parse_loadavg(&root.read("proc/loadavg").unwrap());
    assert_eq!(load, [0.03, 0.10, 0.08]);
    let r = idle_record(load, 4, &before, &after, 1.0, 999);
    assert!(!r.idle);
    assert_eq!(r.busiest[0].pid, 20);
    assert!((r.busiest[0].cpu_percent - 50.0).abs() < 1e-9);
    assert!((r.others_cpu_percent - 51.0).abs() < 1e-9);
    assert!(r.describe().contains("my (odd) name (20) 50%"));
    // The same with process 20 being ourselves: idle.
    let r = idle_record(load, 4, &before, &after, 1.0, 20);
    assert!(r.idle, "{r:?}");
    // High load average alone also says busy.
    let r = idle_record([3.5, 1.0, 1.0], 4, &before, &before, 1.0, 0);
    assert!(!r.idle);
}

const A55: &str = "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\nCPU part\t: 0xd05\nCPU revision\t: 0\n";
const A76: &str = "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\nCPU part\t: 0xd0b\nCPU revision\t: 0\n";
const A72: &str = "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n";

fn cpuinfo(parts: &[&str], tail: &str) -> String {
    let mut s = String::new();
    for (i, p) in parts.iter().enumerate() {
        s.push_str(&format!("processor\t: {i}\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd aes pmull sha1 sha2 crc32\n{p}\n"));
    }
    s + tail
}

#[test]
fn rk3588_has_two_core_types() {
    let dir = tempfile::tempdir().unwrap();
    let parts = [A55, A55, A55, A55, A76, A76, A76, A76];
    write(dir.path(), "proc/cpuinfo", &cpuinfo(&parts, ""));
    for cpu in 0..8 {
        let cap = if cpu < 4 { "414" } else { "1024" };
        write(
            dir.path(),
            &format!("sys/devices/system/cpu/cpu{cpu}/cpu_capacity"),
            cap,
        );
    }
    let types = core_types(&SysRoot::at(dir.path()));
    assert_eq!(types.len(), 2);
    assert_eq!(types[0].name, "cortex-a55");
    assert_eq!(types[0].part.as_deref(), Some("0xd05"));
    assert_eq!(types[0].capacity, Some(414));
    assert_eq!(types[0].cpus, vec![0, 1, 2, 3]);
    assert_eq!(types[1].name, "cortex-a76");
    assert_eq!(types[1].capacity, Some(1024));
    assert_eq!(types[1].cpus, vec![4, 5, 6, 7]);
    assert_eq!(core_type_of(&types, 6).unwrap().name, "cortex-a76");
    assert_eq!(core_type_of(&types, 9), None);
}

#[test]
fn pi4_is_homogeneous() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "proc/cpuinfo",
        &cpuinfo(
            &[A72, A72, A72, A72],
            "Hardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n",
        ),
    );
    for cpu in 0..4 {
        write(
            dir.path(),
            &format!("sys/devices/system/cpu/cpu{cpu}/cpu_capacity"),
            "1024",
        );
    }
    let types = core_types(&SysRoot::at(dir.path()));
    assert_eq!(types.len(), 1);
    assert_eq!(types[0].name, "cortex-a72");
    assert_eq!(types[0].cpus, vec![0, 1, 2, 3]);
}

#[test]
fn same_part_different_capacity_and_intel_hybrid() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "proc/cpuinfo", &cpuinfo(&[A76, A76], ""));
    write(
        dir.path(),
        "sys/devices/system/cpu/cpu0/cpu_capacity",
        "1024",
    );
    write(
        dir.path(),
        "sys/devices/system/cpu/cpu1/cpu_capacity",
        "900",
    );
    let types = core_types(&SysRoot::at(dir.path()));
    assert_eq!(types.len(), 2);
    assert_eq!(types[0].name, "cortex-a76 (capacity 900)");
    assert_eq!(types[0].cpus, vec![1]);

    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "proc/cpuinfo",
        "processor\t: 0\nmodel name\t: Intel Core i7-1260P\n\nprocessor\t: 1\nmodel name\t: Intel Core i7-1260P\n",
    );
    write(dir.path(), "sys/devices/cpu_core/cpus", "0-7\n");
    write(dir.path(), "sys/devices/cpu_atom/cpus", "8-15\n");
    let types = core_types(&SysRoot::at(dir.path()));
    assert_eq!(
        types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["atom", "core"]
    );
    assert_eq!(types[0].cpus, (8..16).collect::<Vec<_>>());
}

#[test]
fn cpu_lists() {
    assert_eq!(parse_cpu_list("0-3,6\n"), vec![0, 1, 2, 3, 6]);
    assert_eq!(parse_cpu_list("4 5 6 7"), vec![4, 5, 6, 7]);
    assert_eq!(cpu_list_text(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
    assert_eq!(cpu_list_text(&[]), "");
}

#[test]
fn pinning_this_thread() {
    let allowed = allowed_cpus();
    assert!(!allowed.is_empty());
    let cpu = *allowed.last().unwrap();
    std::thread::spawn(move || {
        pin_current_thread(cpu).unwrap();
        assert_eq!(current_cpu(), cpu);
    })
    .join()
    .unwrap();
}
