//! Output files that do not exist until they are complete.
//!
//! A decryption writes plaintext as it goes, and a process can die at any
//! instant (SIGKILL, the OOM killer, a power cut). [`OutputFile`] makes sure
//! that such a death leaves nothing behind:
//!
//! - **On Linux** the data goes into an unnamed file, `open(dir, O_TMPFILE)`
//!   in the target's directory. It gets a name with `linkat` only in
//!   [`OutputFile::commit`], after the caller has written and verified
//!   everything and the data is synced; then the directory is synced too, so
//!   that a power cut after success keeps the file. A process killed before
//!   the `linkat` leaves no file at all: the kernel frees the unnamed one.
//!   To *replace* an existing target ([`Existing::Replace`]), the file is first
//!   linked under a unique temporary name and then renamed over the target:
//!   that name exists only between two system calls, when the data is already
//!   complete, verified and synced; a kill in that instant leaves it behind
//!   as a partial file that the next run removes (below).
//! - **Where `O_TMPFILE` is not supported** (vfat, some network file systems,
//!   FUSE, kernels before 3.11, other systems) the data goes into a named file
//!   `.clustercrypt-PID-HOST-RANDOM.partial`, mode 0600, renamed into place on
//!   commit and removed on drop. A process killed while writing leaves it;
//!   [`sweep_stale`] removes every such file whose process (same host name,
//!   PID no longer running) is gone, and the CLI calls it before it writes into
//!   a directory.
//!
//! The environment variable [`NO_TMPFILE_ENV`] (`CLUSTERCRYPT_TEST_NO_TMPFILE=1`)
//! forces the named fallback, so that tests can exercise it on any file system.
//! [`STOP_AFTER_ENV`] (`CLUSTERCRYPT_TEST_STOP_AFTER_BYTES=N`) makes the
//! process stop itself (`SIGSTOP`) once N bytes went into the output, so that
//! a test can kill it at an exact point of a run, however fast the machine.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// Set to `1` to force the named fallback instead of `O_TMPFILE` (for tests).
pub const NO_TMPFILE_ENV: &str = "CLUSTERCRYPT_TEST_NO_TMPFILE";

/// Set to a byte count to stop the process once that much was written to an
/// output (for tests that kill a run at a chosen point).
pub const STOP_AFTER_ENV: &str = "CLUSTERCRYPT_TEST_STOP_AFTER_BYTES";

/// Every temporary name starts so (a hidden file) ...
const PREFIX: &str = ".clustercrypt-";
/// ... and ends so.
const SUFFIX: &str = ".partial";
/// Random hex digits at the end of a temporary name.
const RANDOM_DIGITS: usize = 12;
/// Mode of the data while it is written: readable by the owner only.
const PRIVATE: u32 = 0o600;

/// What to do when the target already exists at commit time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Fail with [`io::ErrorKind::AlreadyExists`]; the target is untouched.
    Refuse,
    /// Replace it atomically (rename over it).
    Replace,
}

/// How the data is held until commit.
#[derive(Debug)]
enum Holder {
    /// An `O_TMPFILE` file; `stage` is the name it is linked under for an
    /// instant before a rename over an existing target.
    Unnamed { stage: OsString },
    /// A named temporary file in the target's directory.
    Named { name: OsString },
}

/// An output file that appears under its name only on [`OutputFile::commit`]
/// and leaves nothing behind when dropped (or when the process is killed)
/// before. You **must** call `commit` to keep the data.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    dir: OwnedFd,
    dir_path: PathBuf,
    target_name: OsString,
    existing: Existing,
    holder: Holder,
    mode: u32,
    done: bool,
    /// Bytes written so far, and the test hook's stop point.
    written: u64,
    stop_after: Option<u64>,
}

/// A stale partial file that [`sweep_stale`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Where it was.
    pub path: PathBuf,
    /// The process that wrote it, which no longer runs.
    pub pid: u32,
}

impl OutputFile {
    /// Prepares `target`; nothing appears under that name before `commit`.
    pub fn create(target: &Path, existing: Existing) -> io::Result<OutputFile> {
        let target_name = target
            .file_name()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} does not name a file", target.display()),
                )
            })?
            .to_os_string();
        let dir_path = parent_dir(target).to_path_buf();
        let dir = rustix::fs::open(
            &dir_path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let (file, holder) = match open_unnamed(&dir) {
            Some(file) => (
                file,
                Holder::Unnamed {
                    stage: temp_name()?,
                },
            ),
            None => {
                let (file, name) = open_named(&dir)?;
                (file, Holder::Named { name })
            }
        };
        Ok(OutputFile {
            file,
            dir,
            dir_path,
            target_name,
            existing,
            holder,
            mode: PRIVATE,
            done: false,
            written: 0,
            stop_after: std::env::var(STOP_AFTER_ENV)
                .ok()
                .and_then(|v| v.parse().ok()),
        })
    }

    /// The file being written (for `metadata`, positioned I/O and the like).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Whether the data is in an unnamed `O_TMPFILE` file (no name anywhere
    /// until commit) rather than a named fallback file.
    pub fn is_unnamed(&self) -> bool {
        matches!(self.holder, Holder::Unnamed { .. })
    }

    /// The permissions the committed file gets (default 0600).
    pub fn set_mode(&mut self, mode: u32) {
        self.mode = mode;
    }

    /// The path a signal handler must remove if the process exits before or
    /// during `commit`: the named fallback file, or the instant's stage name of
    /// a replacing commit. `None` when nothing named can exist before the
    /// target itself.
    pub fn partial_path(&self) -> Option<PathBuf> {
        match (&self.holder, self.existing) {
            (Holder::Named { name }, _) => Some(self.dir_path.join(name)),
            (Holder::Unnamed { stage }, Existing::Replace) => Some(self.dir_path.join(stage)),
            (Holder::Unnamed { .. }, Existing::Refuse) => None,
        }
    }

    /// Syncs the data and gives it its name: call this only once everything
    /// is written and verified. Then syncs the directory, so that the name
    /// survives a power cut.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        rustix::fs::fchmod(&self.file, Mode::from_raw_mode(self.mode as _))?;
        self.file.sync_all()?;
        if let Holder::Unnamed { stage } = &self.holder {
            let stage = stage.clone();
            let replace = self.existing == Existing::Replace;
            let name = if replace {
                stage.clone()
            } else {
                self.target_name.clone()
            };
            match self.link_unnamed(&name) {
                Ok(()) if replace => {
                    let moved =
                        rustix::fs::renameat(&self.dir, &stage, &self.dir, &self.target_name);
                    if let Err(e) = moved {
                        let _ = rustix::fs::unlinkat(&self.dir, &stage, AtFlags::empty());
                        return Err(e.into());
                    }
                    self.done = true;
                }
                Ok(()) => self.done = true,
                Err(e) if e.raw_os_error() == Some(Errno::EXIST.raw_os_error()) => {
                    return Err(exists_error());
                }
                // No way to name an unnamed file here (no /proc and no
                // privilege for AT_EMPTY_PATH): copy it into a named one.
                Err(_) => self.copy_to_named()?,
            }
        }
        if let Holder::Named { name } = &self.holder
            && !self.done
        {
            let name = name.clone();
            self.move_named(&name)?;
            self.done = true;
        }
        match rustix::fs::fsync(&self.dir) {
            // Some file systems cannot sync a directory; the name is written
            // as soon as they write anything.
            Ok(()) | Err(Errno::INVAL) | Err(Errno::NOTSUP) => Ok(()),
            Err(e) => Err(io::Error::from(e)),
        }
    }

    /// Links the unnamed file as `name` in the directory: through
    /// `/proc/self/fd` (needs no privilege), else with `AT_EMPTY_PATH`.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn link_unnamed(&self, name: &OsStr) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let proc_path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
        match rustix::fs::linkat(
            rustix::fs::CWD,
            proc_path.as_str(),
            &self.dir,
            name,
            AtFlags::SYMLINK_FOLLOW,
        ) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => Err(Errno::EXIST.into()),
            Err(_) => Ok(rustix::fs::linkat(
                &self.file,
                "",
                &self.dir,
                name,
                AtFlags::EMPTY_PATH,
            )?),
        }
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn link_unnamed(&self, _name: &OsStr) -> io::Result<()> {
        unreachable!("unnamed files exist on Linux only")
    }

    /// Copies the unnamed file's data into a new named fallback file, which
    /// then takes its place.
    fn copy_to_named(&mut self) -> io::Result<()> {
        let (mut named, name) = open_named(&self.dir)?;
        self.holder = Holder::Named { name };
        let mut from = self.file.try_clone()?;
        io::Seek::seek(&mut from, io::SeekFrom::Start(0))?;
        io::copy(&mut from, &mut named)?;
        rustix::fs::fchmod(&named, Mode::from_raw_mode(self.mode as _))?;
        named.sync_all()?;
        self.file = named;
        Ok(())
    }

    /// Renames the named fallback file to the target, never over an existing
    /// one unless replacing.
    fn move_named(&self, name: &OsStr) -> io::Result<()> {
        let target = &self.target_name;
        if self.existing == Existing::Replace {
            return Ok(rustix::fs::renameat(&self.dir, name, &self.dir, target)?);
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        match rustix::fs::renameat_with(
            &self.dir,
            name,
            &self.dir,
            target,
            rustix::fs::RenameFlags::NOREPLACE,
        ) {
            Ok(()) => return Ok(()),
            Err(Errno::EXIST) => return Err(exists_error()),
            // The file system does not know the flag (NFS, old kernels): link
            // and unlink below.
            Err(Errno::INVAL) | Err(Errno::NOSYS) | Err(Errno::NOTSUP) => {}
            Err(e) => return Err(e.into()),
        }
        match rustix::fs::linkat(&self.dir, name, &self.dir, target, AtFlags::empty()) {
            Ok(()) => {
                rustix::fs::unlinkat(&self.dir, name, AtFlags::empty())?;
                Ok(())
            }
            Err(Errno::EXIST) => Err(exists_error()),
            // No hard links either: check, then rename (a race with another
            // writer of the same name remains possible here).
            Err(Errno::PERM) | Err(Errno::NOTSUP) | Err(Errno::MLINK) => {
                match rustix::fs::statat(&self.dir, target, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(_) => Err(exists_error()),
                    Err(Errno::NOENT) => {
                        Ok(rustix::fs::renameat(&self.dir, name, &self.dir, target)?)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl OutputFile {
    /// Counts `n` more bytes written; stops the process once at the test
    /// hook's point ([`STOP_AFTER_ENV`]).
    fn wrote(&mut self, n: usize) {
        self.written += n as u64;
        if let Some(at) = self.stop_after
            && self.written >= at
        {
            self.stop_after = None;
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::STOP,
            );
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.wrote(n);
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)?;
        self.wrote(buf.len());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // An unnamed file vanishes with its descriptor; a named one must go.
        if let Holder::Named { name } = &self.holder {
            let _ = rustix::fs::unlinkat(&self.dir, name, AtFlags::empty());
        }
    }
}

/// The target appeared while the output was written (callers check before).
fn exists_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        "the file already exists (it appeared while this run worked); it was not replaced",
    )
}

/// The directory `path` is in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Whether the test-only switch forces the named fallback.
fn tmpfile_forced_off() -> bool {
    std::env::var_os(NO_TMPFILE_ENV).is_some_and(|v| v == "1")
}

/// An `O_TMPFILE` file in `dir`, or `None` where the file system or the
/// system has none (then the caller falls back to a named file).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_unnamed(dir: &OwnedFd) -> Option<File> {
    if tmpfile_forced_off() {
        return None;
    }
    // Without O_EXCL, so that linkat may give it a name later (open(2)).
    rustix::fs::openat(
        dir,
        ".",
        OFlags::RDWR | OFlags::TMPFILE | OFlags::CLOEXEC,
        Mode::from_raw_mode(PRIVATE as _),
    )
    .ok()
    .map(File::from)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn open_unnamed(_dir: &OwnedFd) -> Option<File> {
    let _ = tmpfile_forced_off();
    None
}

/// Creates a new named fallback file in `dir`, mode 0600.
fn open_named(dir: &OwnedFd) -> io::Result<(File, OsString)> {
    loop {
        let name = temp_name()?;
        match rustix::fs::openat(
            dir,
            &name,
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
            Mode::from_raw_mode(PRIVATE as _),
        ) {
            Ok(fd) => return Ok((File::from(fd), name)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// This machine's host name as it appears in temporary names: letters,
/// digits, `.`, `_` and `-` only.
fn host_tag() -> String {
    let uname = rustix::system::uname();
    let tag: String = uname
        .nodename()
        .to_string_lossy()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(64)
        .collect();
    if tag.is_empty() {
        "localhost".into()
    } else {
        tag
    }
}

/// `.clustercrypt-PID-HOST-RANDOM.partial`: says what it is, which process
/// on which machine wrote it, and is unique.
fn temp_name() -> io::Result<OsString> {
    let mut random = [0u8; RANDOM_DIGITS / 2];
    getrandom::fill(&mut random).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(format!(
        "{PREFIX}{}-{}-{}{SUFFIX}",
        std::process::id(),
        host_tag(),
        hex::encode(random)
    )
    .into())
}

/// The writer's PID and host of a temporary name, `None` for other names.
fn parse_temp_name(name: &OsStr) -> Option<(u32, &str)> {
    let name = std::str::from_utf8(name.as_bytes()).ok()?;
    let middle = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let (pid, rest) = middle.split_once('-')?;
    let (host, random) = rest.rsplit_once('-')?;
    let digits = |s: &str, hex: bool| {
        !s.is_empty()
            && s.chars().all(|c| {
                if hex {
                    c.is_ascii_hexdigit()
                } else {
                    c.is_ascii_digit()
                }
            })
    };
    if !digits(pid, false) || random.len() != RANDOM_DIGITS || !digits(random, true) {
        return None;
    }
    if host.is_empty() {
        return None;
    }
    Some((pid.parse().ok()?, host))
}

/// Whether process `pid` runs on this machine (a process of another user
/// counts as running).
fn running(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(rustix::process::test_kill_process(pid), Err(Errno::SRCH))
}

/// Removes the partial files that interrupted runs on this machine left in
/// the directory of `target` (processes that no longer run) and returns them.
/// Files written by running processes or on other machines (a shared network
/// directory) stay.
pub fn sweep_stale(target: &Path) -> io::Result<Vec<Swept>> {
    let dir = parent_dir(target);
    let host = host_tag();
    let me = std::process::id();
    let mut swept = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some((pid, their_host)) = parse_temp_name(&name) else {
            continue;
        };
        if their_host != host || pid == me || running(pid) {
            continue;
        }
        let path = dir.join(&name);
        match std::fs::remove_file(&path) {
            Ok(()) => swept.push(Swept { path, pid }),
            // Another run swept it first.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(swept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A fresh empty directory under the system's temporary directory.
    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let mut random = [0u8; 8];
            getrandom::fill(&mut random).unwrap();
            let path = std::env::temp_dir().join(format!(
                "cc-output-{tag}-{}-{}",
                std::process::id(),
                hex::encode(random)
            ));
            std::fs::create_dir(&path).unwrap();
            Dir(path)
        }

        fn names(&self) -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A PID that certainly ran and certainly ended.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    /// The tests below run with both holders: `named` forces the fallback.
    fn create(target: &Path, existing: Existing, named: bool) -> OutputFile {
        let dir = rustix::fs::open(
            parent_dir(target),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        if !named {
            let out = OutputFile::create(target, existing).unwrap();
            // tmpfs and ext4 (the test machines' file systems) have O_TMPFILE.
            assert!(
                out.is_unnamed() || tmpfile_forced_off(),
                "no O_TMPFILE in {}",
                target.display()
            );
            return out;
        }
        let (file, name) = open_named(&dir).unwrap();
        OutputFile {
            file,
            dir,
            dir_path: parent_dir(target).to_path_buf(),
            target_name: target.file_name().unwrap().to_os_string(),
            existing,
            holder: Holder::Named { name },
            mode: PRIVATE,
            done: false,
            written: 0,
            stop_after: None,
        }
    }

    #[test]
    fn nothing_is_visible_before_commit_and_the_data_after() {
        for named in [false, true] {
            let d = Dir::new("commit");
            let target = d.0.join("out.bin");
            let mut out = create(&target, Existing::Refuse, named);
            out.write_all(b"secret plaintext").unwrap();
            let during = d.names();
            if named {
                assert_eq!(during.len(), 1, "{during:?}");
                let (pid, host) = parse_temp_name(OsStr::new(&during[0])).unwrap();
                assert_eq!((pid, host), (std::process::id(), host_tag().as_str()));
                let mode = std::fs::metadata(d.0.join(&during[0]))
                    .unwrap()
                    .permissions();
                assert_eq!(mode.mode() & 0o777, 0o600);
            } else {
                assert!(during.is_empty(), "{during:?}");
            }
            out.commit().unwrap();
            assert_eq!(d.names(), ["out.bin"]);
            assert_eq!(std::fs::read(&target).unwrap(), b"secret plaintext");
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "named {named}");
        }
    }

    #[test]
    fn dropping_without_commit_leaves_nothing() {
        for named in [false, true] {
            for existing in [Existing::Refuse, Existing::Replace] {
                let d = Dir::new("drop");
                let mut out = create(&d.0.join("out.bin"), existing, named);
                out.write_all(&[7; 100_000]).unwrap();
                drop(out);
                assert!(d.names().is_empty(), "named {named}: {:?}", d.names());
            }
        }
    }

    #[test]
    fn an_existing_target_is_refused_or_replaced() {
        for named in [false, true] {
            let d = Dir::new("exists");
            let target = d.0.join("out.bin");
            std::fs::write(&target, b"old").unwrap();
            let mut out = create(&target, Existing::Refuse, named);
            out.write_all(b"new").unwrap();
            let e = out.commit().unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
            assert_eq!(std::fs::read(&target).unwrap(), b"old");
            assert_eq!(d.names(), ["out.bin"], "named {named}");

            let mut out = create(&target, Existing::Replace, named);
            out.write_all(b"new").unwrap();
            out.set_mode(0o644);
            out.commit().unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), b"new");
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
            assert_eq!(d.names(), ["out.bin"], "named {named}");
        }
    }

    #[test]
    fn a_replacing_commit_with_the_target_gone_still_works() {
        let d = Dir::new("replace-new");
        let target = d.0.join("fresh");
        let mut out = create(&target, Existing::Replace, false);
        let stage = out.partial_path().unwrap();
        assert!(parse_temp_name(stage.file_name().unwrap()).is_some());
        out.write_all(b"x").unwrap();
        out.commit().unwrap();
        assert_eq!(d.names(), ["fresh"]);
        assert!(!stage.exists());
    }

    #[test]
    fn the_copy_fallback_names_the_data() {
        // As when neither /proc nor AT_EMPTY_PATH can name the unnamed file.
        let d = Dir::new("copy");
        let target = d.0.join("out");
        let mut out = create(&target, Existing::Refuse, false);
        if !out.is_unnamed() {
            return; // the fallback forced for the whole run
        }
        out.write_all(&[1, 2, 3]).unwrap();
        out.copy_to_named().unwrap();
        assert!(!out.is_unnamed());
        out.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), [1, 2, 3]);
        assert_eq!(d.names(), ["out"]);
    }

    #[test]
    fn temp_names_parse_and_others_do_not() {
        let name = temp_name().unwrap();
        assert_eq!(
            parse_temp_name(&name),
            Some((std::process::id(), host_tag().as_str()))
        );
        assert_eq!(
            parse_temp_name(OsStr::new(
                ".clustercrypt-12-my-host.lan-0123456789ab.partial"
            )),
            Some((12, "my-host.lan"))
        );
        for other in [
            ".clustercrypt-xIJuvx.partial",
            ".clustercrypt-12-host-0123456789a.partial",
            ".clustercrypt-12-host-0123456789ag.partial",
            ".clustercrypt-x2-host-0123456789ab.partial",
            ".clustercrypt-12--0123456789ab.partial",
            ".clustercrypt-12-host-0123456789ab.partia",
            "clustercrypt-12-host-0123456789ab.partial",
            "out.bin",
        ] {
            assert_eq!(parse_temp_name(OsStr::new(other)), None, "{other}");
        }
    }

    #[test]
    fn sweeping_removes_only_partials_of_ended_processes_on_this_host() {
        let d = Dir::new("sweep");
        let dead = dead_pid();
        let host = host_tag();
        let stale = format!("{PREFIX}{dead}-{host}-00112233aabb{SUFFIX}");
        let mine = format!("{PREFIX}{}-{host}-00112233aabb{SUFFIX}", std::process::id());
        // PID 1 always runs (as another user's process, kill(1, 0) says EPERM).
        let live = format!("{PREFIX}1-{host}-00112233aabb{SUFFIX}");
        let elsewhere = format!("{PREFIX}{dead}-not-{host}-00112233aabb{SUFFIX}");
        let legacy = ".clustercrypt-xIJuvx.partial".to_string();
        for n in [&stale, &mine, &live, &elsewhere, &legacy] {
            std::fs::write(d.0.join(n), b"p").unwrap();
        }
        let swept = sweep_stale(&d.0.join("out")).unwrap();
        assert_eq!(
            swept,
            [Swept {
                path: d.0.join(&stale),
                pid: dead
            }]
        );
        let mut left = vec![mine, live, elsewhere, legacy];
        left.sort();
        assert_eq!(d.names(), left);
        assert!(sweep_stale(&d.0.join("out")).unwrap().is_empty());
    }
}
