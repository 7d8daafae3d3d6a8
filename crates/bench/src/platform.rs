//! What the machine was doing while it was measured, the way sbc-bench checks
//! it: the core's real clock (a timed chain of dependent adds, libgcrypt's
//! bench-slope "auto GHz"), cpufreq, temperature, throttling, whether the
//! machine was idle, and its core types (big.LITTLE). Every file is read under
//! a root directory ([`SysRoot`]) so that tests can give a fake `/proc` and `/sys`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::clock::Clock;

/// The directory that holds `proc` and `sys` (`/` on a real machine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot(PathBuf);

impl Default for SysRoot {
    fn default() -> Self {
        SysRoot(PathBuf::from("/"))
    }
}

impl SysRoot {
    /// A fake tree (tests) or another root.
    pub fn at(root: impl Into<PathBuf>) -> SysRoot {
        SysRoot(root.into())
    }

    /// `rel` under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel.trim_start_matches('/'))
    }

    /// The trimmed contents of `rel`, if it exists and is not empty.
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }

    fn entries(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(rel))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

// ---------------------------------------------------------------- clock

/// Runs a known number of cycles of work.
pub trait CycleSource: Sync {
    /// Runs `iterations` loop iterations and returns the cycles they take on
    /// one core, or `None` when this machine has no such loop.
    fn run(&self, iterations: u64) -> Option<u64>;
}

/// The real thing: dependent adds, one per cycle.
#[derive(Debug, Clone, Copy, Default)]
pub struct DependentAdds;

impl CycleSource for DependentAdds {
    fn run(&self, iterations: u64) -> Option<u64> {
        clustercrypt_catalogue::cycles::dependent_adds(iterations)
    }
}

/// Times the cycle loop with `clock` and returns the clock in MHz: the loop is
/// grown until one trial takes at least 1 ms, then the fastest of 7 trials
/// counts (preemption only ever makes a trial slower).
pub fn measure_mhz(clock: &dyn Clock, cycles: &dyn CycleSource) -> Option<f64> {
    let mut iterations = 1024u64;
    let trial = |n: u64| -> Option<(u64, Duration)> {
        let start = clock.now();
        let c = cycles.run(n)?;
        Some((c, clock.now().saturating_sub(start)))
    };
    loop {
        let (_, t) = trial(iterations)?;
        if t >= Duration::from_millis(1) || iterations >= 1 << 30 {
            break;
        }
        iterations *= 2;
    }
    let mut best: Option<f64> = None;
    for _ in 0..7 {
        let (c, t) = trial(iterations)?;
        let us = t.as_secs_f64() * 1e6;
        if us > 0.0 {
            let mhz = c as f64 / us;
            best = Some(best.map_or(mhz, |b: f64| b.max(mhz)));
        }
    }
    best
}

/// Cycles per byte at `mhz` for `mib_s` MiB/s done by `workers` cores at once.
pub fn cycles_per_byte(mhz: f64, mib_s: f64, workers: usize) -> Option<f64> {
    (mhz > 0.0 && mib_s > 0.0)
        .then(|| mhz * 1e6 * workers.max(1) as f64 / (mib_s * crate::measure::MIB))
}

/// The clock a run's cycles per byte are computed at, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockRecord {
    /// The clock used for cycles per byte, MHz.
    pub mhz: f64,
    /// `measured` (dependent adds timed), `override` (`--cpu-mhz`) or
    /// `scaling_cur_freq` (the kernel's word, when no loop could run).
    pub source: String,
    /// The timed dependent-add loop, MHz.
    #[serde(default)]
    pub measured_mhz: Option<f64>,
    /// cpufreq's `scaling_cur_freq` of the CPU that measured, MHz.
    #[serde(default)]
    pub scaling_cur_mhz: Option<f64>,
    /// cpufreq's `cpuinfo_max_freq`, MHz.
    #[serde(default)]
    pub max_mhz: Option<f64>,
    /// A disagreement between the sources worth knowing.
    #[serde(default)]
    pub note: Option<String>,
}

/// Reads cpufreq's current and maximum frequency of `cpu`, MHz.
pub fn cpufreq_mhz(root: &SysRoot, cpu: usize) -> (Option<f64>, Option<f64>) {
    let khz = |f: &str| {
        root.read(&format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/{f}"))
            .and_then(|s| s.parse::<f64>().ok())
            .map(|k| k / 1000.0)
    };
    (khz("scaling_cur_freq"), khz("cpuinfo_max_freq"))
}

/// Combines the sources: an override wins, then the measurement, then cpufreq.
pub fn clock_record(
    overridden: Option<f64>,
    measured: Option<f64>,
    (cur, max): (Option<f64>, Option<f64>),
) -> Option<ClockRecord> {
    let (mhz, source) = match (overridden, measured, cur) {
        (Some(o), _, _) => (o, "override"),
        (None, Some(m), _) => (m, "measured"),
        (None, None, Some(c)) => (c, "scaling_cur_freq"),
        _ => return None,
    };
    let note = match (measured, cur) {
        (Some(m), Some(c)) if (m - c).abs() > 0.1 * c => {
            Some(format!("measured {m:.0} MHz but cpufreq says {c:.0} MHz"))
        }
        _ => None,
    };
    Some(ClockRecord {
        mhz,
        source: source.into(),
        measured_mhz: measured,
        scaling_cur_mhz: cur,
        max_mhz: max,
        note,
    })
}

// ---------------------------------------------------------------- cpufreq time_in_state

/// One cpufreq policy's `stats/time_in_state`: kHz -> time in 10 ms units.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// CPUs of the policy (`affected_cpus`).
    pub cpus: Vec<usize>,
    /// kHz -> ticks of 10 ms.
    pub time_in_state: BTreeMap<u64, u64>,
}

/// Every policy at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FreqSnapshot(pub Vec<Policy>);

/// Parses `time_in_state` text ("kHz ticks" per line).
pub fn parse_time_in_state(text: &str) -> BTreeMap<u64, u64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
        })
        .collect()
}

/// Parses a CPU list (`0-3,6`).
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for part in text.split([',', ' ', '\n']).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    v.extend(a..=b);
                }
            }
            None => v.extend(part.parse::<usize>().ok()),
        }
    }
    v
}

/// `0-3,6` from a sorted CPU list.
pub fn cpu_list_text(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

impl FreqSnapshot {
    /// Reads every `cpufreq/policy*` (empty when there is no cpufreq, as in most VMs).
    pub fn read(root: &SysRoot) -> FreqSnapshot {
        let base = "sys/devices/system/cpu/cpufreq";
        let mut v = Vec::new();
        for p in root.entries(base) {
            if !p.starts_with("policy") {
                continue;
            }
            let Some(tis) = root.read(&format!("{base}/{p}/stats/time_in_state")) else {
                continue;
            };
            v.push(Policy {
                cpus: root
                    .read(&format!("{base}/{p}/affected_cpus"))
                    .map(|s| parse_cpu_list(&s))
                    .unwrap_or_default(),
                time_in_state: parse_time_in_state(&tis),
            });
        }
        FreqSnapshot(v)
    }
}

/// The clock of a window between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FreqWindow {
    /// Lowest frequency with time in the window, MHz.
    pub min_mhz: f64,
    /// Highest, MHz.
    pub max_mhz: f64,
    /// Share of the window spent below 95% of the highest.
    pub share_below: f64,
}

/// Share of a window below its top clock that makes a row `throttled`: more
/// than a governor's ramp-up, less than a real drop.
pub const THROTTLE_SHARE: f64 = 0.05;

impl FreqWindow {
    /// Whether the clock dropped during the window.
    pub fn dropped(&self) -> bool {
        self.share_below > THROTTLE_SHARE
    }
}

/// What the policies of `cpus` (all policies when empty) spent at each
/// frequency between `before` and `after`.
pub fn freq_window(
    before: &FreqSnapshot,
    after: &FreqSnapshot,
    cpus: &[usize],
) -> Option<FreqWindow> {
    let mut spent: BTreeMap<u64, u64> = BTreeMap::new();
    for (i, p) in after.0.iter().enumerate() {
        if !cpus.is_empty() && !p.cpus.iter().any(|c| cpus.contains(c)) {
            continue;
        }
        let prev = before
            .0
            .iter()
            .find(|b| b.cpus == p.cpus)
            .or(before.0.get(i));
        for (&khz, &t) in &p.time_in_state {
            let t0 = prev
                .and_then(|b| b.time_in_state.get(&khz))
                .copied()
                .unwrap_or(0);
            let d = t.saturating_sub(t0);
            if d > 0 {
                *spent.entry(khz).or_default() += d;
            }
        }
    }
    let (&lo, _) = spent.iter().next()?;
    let (&hi, _) = spent.iter().next_back()?;
    let total: u64 = spent.values().sum();
    let below: u64 = spent
        .iter()
        .filter(|(k, _)| (**k as f64) < 0.95 * hi as f64)
        .map(|(_, t)| t)
        .sum();
    Some(FreqWindow {
        min_mhz: lo as f64 / 1000.0,
        max_mhz: hi as f64 / 1000.0,
        share_below: below as f64 / total as f64,
    })
}

// ---------------------------------------------------------------- thermal, vcgencmd

/// The hottest thermal zone, °C (`/sys/class/thermal/thermal_zone*/temp`).
pub fn temperature_c(root: &SysRoot) -> Option<f64> {
    root.entries("sys/class/thermal")
        .iter()
        .filter(|z| z.starts_with("thermal_zone"))
        .filter_map(|z| root.read(&format!("sys/class/thermal/{z}/temp")))
        .filter_map(|t| t.parse::<f64>().ok())
        .map(|m| m / 1000.0)
        .reduce(f64::max)
}

/// `vcgencmd get_throttled` on Raspberry Pis: the raw bits, when the tool exists.
pub fn vcgencmd_throttled() -> Option<u32> {
    let out = std::process::Command::new("vcgencmd")
        .arg("get_throttled")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    parse_get_throttled(&String::from_utf8_lossy(&out.stdout))
}

/// Parses `throttled=0x50005`.
pub fn parse_get_throttled(text: &str) -> Option<u32> {
    let v = text.trim().strip_prefix("throttled=")?;
    u32::from_str_radix(v.trim_start_matches("0x"), 16).ok()
}

/// Whether `get_throttled` bits say the ARM clock is capped or throttled now
/// (bit 1: frequency capped, bit 2: throttled).
pub fn throttled_now(bits: u32) -> bool {
    bits & 0x6 != 0
}

// ---------------------------------------------------------------- idleness

/// A process that used the CPU while the machine should have been idle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    /// Process id.
    pub pid: u32,
    /// Command name.
    pub name: String,
    /// CPU use over the sample, percent of one core.
    pub cpu_percent: f64,
}

/// Whether the machine was idle before the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleRecord {
    /// `/proc/loadavg`: 1, 5 and 15 minutes.
    pub load_average: [f64; 3],
    /// Other processes' CPU use over the sample, percent of one core, busiest first.
    pub busiest: Vec<BusyProcess>,
    /// Sum of the other processes' CPU use, percent of one core.
    pub others_cpu_percent: f64,
    /// The verdict.
    pub idle: bool,
}

/// Others' CPU use (percent of one core) above which the machine is busy.
pub const BUSY_PERCENT: f64 = 20.0;

/// Per-process CPU ticks at one moment: pid -> (name, utime + stime).
pub type ProcTicks = BTreeMap<u32, (String, u64)>;

/// Parses `/proc/<pid>/stat`: name, utime + stime, and the CPU it last ran on.
pub fn parse_stat(text: &str) -> Option<(String, u64, Option<usize>)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text[open + 1..close].to_string();
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // After ")": state is field 3 of the man page, so utime (14) is index 11.
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some((name, ticks, f.get(36).and_then(|s| s.parse().ok())))
}

/// Reads every process's CPU ticks.
pub fn proc_ticks(root: &SysRoot) -> ProcTicks {
    root.entries("proc")
        .into_iter()
        .filter_map(|p| p.parse::<u32>().ok())
        .filter_map(|pid| {
            let (name, ticks, _) = parse_stat(&root.read(&format!("proc/{pid}/stat"))?)?;
            Some((pid, (name, ticks)))
        })
        .collect()
}

/// The idle verdict from two tick samples `seconds` apart, excluding `own_pid`.
/// Ticks are the kernel's USER_HZ, 100 per second on Linux.
pub fn idle_record(
    load_average: [f64; 3],
    cores: usize,
    before: &ProcTicks,
    after: &ProcTicks,
    seconds: f64,
    own_pid: u32,
) -> IdleRecord {
    let mut busiest: Vec<BusyProcess> = after
        .iter()
        .filter(|(pid, _)| **pid != own_pid)
        .filter_map(|(pid, (name, t))| {
            let t0 = before.get(pid).map_or(0, |b| b.1);
            let pct = t.saturating_sub(t0) as f64 / 100.0 / seconds * 100.0;
            (pct > 0.0).then(|| BusyProcess {
                pid: *pid,
                name: name.clone(),
                cpu_percent: pct,
            })
        })
        .collect();
    busiest.sort_by(|a, b| b.cpu_percent.total_cmp(&a.cpu_percent));
    let others: f64 = busiest.iter().map(|p| p.cpu_percent).sum();
    busiest.truncate(5);
    let idle = others < BUSY_PERCENT && load_average[0] < 0.5 * cores.max(1) as f64 + 0.1;
    IdleRecord {
        load_average,
        busiest,
        others_cpu_percent: others,
        idle,
    }
}

/// Parses `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> [f64; 3] {
    let mut v = [0.0; 3];
    for (slot, f) in v.iter_mut().zip(text.split_whitespace()) {
        *slot = f.parse().unwrap_or(0.0);
    }
    v
}

/// Samples the machine for `sample` and says whether it is idle.
pub fn check_idle(root: &SysRoot, cores: usize, sample: Duration) -> IdleRecord {
    let load = parse_loadavg(&root.read("proc/loadavg").unwrap_or_default());
    let before = proc_ticks(root);
    std::thread::sleep(sample);
    let after = proc_ticks(root);
    idle_record(
        load,
        cores,
        &before,
        &after,
        sample.as_secs_f64(),
        std::process::id(),
    )
}

impl IdleRecord {
    /// One line for a warning or the report.
    pub fn describe(&self) -> String {
        let [a, b, c] = self.load_average;
        let mut s = format!(
            "load average {a:.2} {b:.2} {c:.2}, other processes use {:.0}% of a core",
            self.others_cpu_percent
        );
        if !self.busiest.is_empty() {
            let top: Vec<String> = self
                .busiest
                .iter()
                .take(3)
                .map(|p| format!("{} ({}) {:.0}%", p.name, p.pid, p.cpu_percent))
                .collect();
            s.push_str(&format!("; busiest: {}", top.join(", ")));
        }
        s
    }
}

// ---------------------------------------------------------------- core types

/// One kind of core of a (possibly heterogeneous) CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreType {
    /// `cortex-a76`, `part 0xd99`, `core`/`atom` (Intel hybrid), or the model name.
    pub name: String,
    /// `CPU implementer` (ARM), e.g. `0x41`.
    #[serde(default)]
    pub implementer: Option<String>,
    /// `CPU part` (ARM MIDR part number), e.g. `0xd0b`.
    #[serde(default)]
    pub part: Option<String>,
    /// `cpu_capacity` (1024 = the biggest core).
    #[serde(default)]
    pub capacity: Option<u32>,
    /// Logical CPUs of this type.
    pub cpus: Vec<usize>,
}

/// The name of an ARM core from its implementer and part number.
pub fn arm_core_name(implementer: &str, part: &str) -> Option<&'static str> {
    if implementer != "0x41" {
        return None;
    }
    Some(match part {
        "0xd03" => "cortex-a53",
        "0xd04" => "cortex-a35",
        "0xd05" => "cortex-a55",
        "0xd07" => "cortex-a57",
        "0xd08" => "cortex-a72",
        "0xd09" => "cortex-a73",
        "0xd0a" => "cortex-a75",
        "0xd0b" => "cortex-a76",
        "0xd0c" => "neoverse-n1",
        "0xd0d" => "cortex-a77",
        "0xd40" => "neoverse-v1",
        "0xd41" => "cortex-a78",
        "0xd44" => "cortex-x1",
        "0xd46" => "cortex-a510",
        "0xd47" => "cortex-a710",
        "0xd48" => "cortex-x2",
        "0xd49" => "neoverse-n2",
        "0xd4d" => "cortex-a715",
        "0xd4e" => "cortex-x3",
        "0xd4f" => "neoverse-v2",
        "0xd80" => "cortex-a520",
        "0xd81" => "cortex-a720",
        "0xd82" => "cortex-x4",
        _ => return None,
    })
}

/// The core types of the machine: CPUs grouped by (implementer, part,
/// capacity), or by Intel hybrid's `cpu_core`/`cpu_atom` lists. One entry on a
/// homogeneous CPU; sorted by capacity, smallest first.
pub fn core_types(root: &SysRoot) -> Vec<CoreType> {
    let hybrid: Vec<CoreType> = ["atom", "core"]
        .iter()
        .filter_map(|k| {
            let cpus = parse_cpu_list(&root.read(&format!("sys/devices/cpu_{k}/cpus"))?);
            (!cpus.is_empty()).then(|| CoreType {
                name: (*k).to_string(),
                implementer: None,
                part: None,
                capacity: None,
                cpus,
            })
        })
        .collect();
    if hybrid.len() > 1 {
        return hybrid;
    }
    let cpuinfo = root.read("proc/cpuinfo").unwrap_or_default();
    let mut types: Vec<CoreType> = Vec::new();
    for block in cpuinfo.split("\n\n") {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let Some(cpu) = field("processor").and_then(|p| p.parse::<usize>().ok()) else {
            continue;
        };
        let implementer = field("CPU implementer");
        let part = field("CPU part");
        let capacity = root
            .read(&format!("sys/devices/system/cpu/cpu{cpu}/cpu_capacity"))
            .and_then(|s| s.parse().ok());
        let name = match (&implementer, &part) {
            (Some(i), Some(p)) => arm_core_name(i, p).map_or(format!("part {p}"), String::from),
            _ => field("model name").unwrap_or_else(|| "cpu".into()),
        };
        match types
            .iter_mut()
            .find(|t| t.implementer == implementer && t.part == part && t.capacity == capacity)
        {
            Some(t) => t.cpus.push(cpu),
            None => types.push(CoreType {
                name,
                implementer,
                part,
                capacity,
                cpus: vec![cpu],
            }),
        }
    }
    // Same part at different capacities (e.g. an A76 pair clocked lower): say which.
    let names: Vec<String> = types.iter().map(|t| t.name.clone()).collect();
    for t in &mut types {
        if names.iter().filter(|n| **n == t.name).count() > 1
            && let Some(c) = t.capacity
        {
            t.name = format!("{} (capacity {c})", t.name);
        }
    }
    types.sort_by_key(|t| (t.capacity.unwrap_or(u32::MAX), t.cpus.first().copied()));
    types
}

/// The core type of `cpu`.
pub fn core_type_of(types: &[CoreType], cpu: usize) -> Option<&CoreType> {
    types.iter().find(|t| t.cpus.contains(&cpu))
}

// ---------------------------------------------------------------- pinning

/// CPUs this process may run on (all online CPUs when unknown).
pub fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// Pins the calling thread to `cpu` (sched_setaffinity).
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> usize {
    rustix::thread::sched_getcpu()
}

/// Whether `path` exists under the root.
pub fn exists(root: &SysRoot, rel: &str) -> bool {
    Path::new(&root.path(rel)).exists()
}

#[cfg(test)]
mod tests;
