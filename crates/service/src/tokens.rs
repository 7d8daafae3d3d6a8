//! Access tokens: the token file, creating tokens, checking a presented token.
//!
//! A token is 32 random bytes shown once to the user as `cct_<base64url>`.
//! The token file keeps only SHA-256 of each token, one line per token:
//! `sha256:<64 hex digits> <name> <created, RFC 3339>`, so a leaked token file
//! does not let anyone in. A 256-bit random token needs no slow hash: there is
//! nothing to brute-force. The server compares the hash of a presented token
//! with every stored hash in constant time, so timing tells nothing about how
//! close a guess came, nor which line matched.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use clustercrypt_engine::output::{Existing, OutputFile};
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroizing;

/// The prefix of every token, so that leaked tokens are easy to search for.
pub const TOKEN_PREFIX: &str = "cct_";

/// Longest `Authorization` value considered at all (a token is 47 characters).
const MAX_PRESENTED_LEN: usize = 256;

/// What can go wrong with a token file.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The file cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The token file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the file is not a token line.
    #[error("{path}:{line}: not a token line (want 'sha256:<64 hex digits> <name> <created>')")]
    Malformed {
        /// The token file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
    },
    /// The name is not usable in the file.
    #[error("a token name is 1 to 64 characters of letters, digits, '-', '_', '.' or '@'")]
    BadName,
    /// The operating system gave no randomness.
    #[error("no randomness from the OS: {0}")]
    Random(String),
}

/// A newly created token: the secret to hand to the user once, and its name.
pub struct NewToken {
    /// `cct_<base64url>`; wiped when dropped.
    pub secret: Zeroizing<String>,
    /// The name written next to its hash.
    pub name: String,
}

impl std::fmt::Debug for NewToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewToken")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// One line of a token file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenEntry {
    /// SHA-256 of the token.
    pub hash: [u8; 32],
    /// The name given at creation.
    pub name: String,
    /// When it was created (RFC 3339, as written in the file).
    pub created: String,
}

/// The tokens a server accepts.
#[derive(Debug, Clone, Default)]
pub struct TokenStore {
    entries: Vec<TokenEntry>,
    /// The file they were read from, for [`LiveTokens`] to follow.
    path: Option<PathBuf>,
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'))
}

fn hash(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

/// Parses one line (without its newline); `None` if it is not a token line.
fn parse_line(line: &str) -> Option<TokenEntry> {
    let mut fields = line.split_ascii_whitespace();
    let digest = fields.next()?.strip_prefix("sha256:")?;
    let name = fields.next()?;
    let created = fields.next()?;
    if fields.next().is_some() || digest.len() != 64 || !valid_name(name) {
        return None;
    }
    let mut hash = [0u8; 32];
    hex::decode_to_slice(digest, &mut hash).ok()?;
    Some(TokenEntry {
        hash,
        name: name.to_string(),
        created: created.to_string(),
    })
}

impl TokenStore {
    /// Reads a token file. Blank lines and lines starting with `#` are skipped;
    /// any other line that is not a token line is an error (a typo must not
    /// silently lock everyone out, nor let a half-written line through).
    pub fn load(path: &Path) -> Result<TokenStore, TokenError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut store = TokenStore::parse(&text, path)?;
        store.path = Some(path.to_path_buf());
        Ok(store)
    }

    fn parse(text: &str, path: &Path) -> Result<TokenStore, TokenError> {
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            entries.push(parse_line(line).ok_or_else(|| TokenError::Malformed {
                path: path.to_path_buf(),
                line: i + 1,
            })?);
        }
        Ok(TokenStore {
            entries,
            path: None,
        })
    }

    /// The tokens, in file order.
    pub fn entries(&self) -> &[TokenEntry] {
        &self.entries
    }

    /// The name of the token `presented` if it is one of ours. Every stored
    /// hash is compared, in constant time, whether or not an earlier one matched.
    pub fn verify(&self, presented: &[u8]) -> Option<&str> {
        if presented.is_empty() || presented.len() > MAX_PRESENTED_LEN {
            return None;
        }
        let h = hash(presented);
        let mut found = subtle::Choice::from(0);
        let mut index = 0u32;
        for (i, e) in self.entries.iter().enumerate() {
            let eq = e.hash.ct_eq(&h);
            index = u32::conditional_select(&index, &(i as u32), eq);
            found |= eq;
        }
        bool::from(found).then(|| self.entries[index as usize].name.as_str())
    }
}

/// What identifies a version of the token file: a rewrite (rename) changes
/// the inode, an append the length, an edit in place the modification time.
type Stamp = Option<(u64, u64, std::time::SystemTime)>;

fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.ino(), m.len(), m.modified().ok()?))
}

/// A token store that follows its file: tokens created or revoked while the
/// server runs take effect at the next request, without a restart. A file
/// that cannot be read or parsed (half-edited) leaves the previous tokens in
/// force, with a warning on stderr.
#[derive(Debug)]
pub struct LiveTokens {
    path: Option<PathBuf>,
    state: std::sync::RwLock<(TokenStore, Stamp)>,
}

impl LiveTokens {
    /// Follows the file `store` was loaded from (a store not from a file stays as it is).
    pub fn new(store: TokenStore) -> LiveTokens {
        let path = store.path.clone();
        let now = path.as_deref().and_then(stamp);
        LiveTokens {
            path,
            state: std::sync::RwLock::new((store, now)),
        }
    }

    /// Whether `presented` is a valid token now; see [`TokenStore::verify`].
    pub fn verify(&self, presented: &[u8]) -> bool {
        self.refresh();
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        state.0.verify(presented).is_some()
    }

    fn refresh(&self) {
        let Some(path) = &self.path else { return };
        let now = stamp(path);
        if self.state.read().unwrap_or_else(|e| e.into_inner()).1 == now {
            return;
        }
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        if state.1 == now {
            return; // another request reloaded it meanwhile
        }
        state.1 = now;
        match TokenStore::load(path) {
            Ok(store) => {
                eprintln!(
                    "clustercrypt: reloaded {}: {} token(s)",
                    path.display(),
                    store.entries.len()
                );
                state.0 = store;
            }
            Err(e) => eprintln!("clustercrypt: warning: keeping the previous tokens: {e}"),
        }
    }
}

/// Removes every token named `name` from the token file (rewritten atomically,
/// mode 0600); returns how many were removed.
pub fn revoke(path: &Path, name: &str) -> Result<usize, TokenError> {
    let io = |source| TokenError::Io {
        path: path.to_path_buf(),
        source,
    };
    let text = std::fs::read_to_string(path).map_err(io)?;
    // Refuse to rewrite a file we do not understand.
    TokenStore::parse(&text, path)?;
    let mut removed = 0;
    let mut kept = String::with_capacity(text.len());
    for line in text.lines() {
        if parse_line(line.trim()).is_some_and(|e| e.name == name) {
            removed += 1;
        } else {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    if removed == 0 {
        return Ok(0);
    }
    // Mode 0600, and no half-written token file even if the process dies.
    let mut tmp = OutputFile::create(path, Existing::Replace).map_err(io)?;
    tmp.write_all(kept.as_bytes()).map_err(io)?;
    tmp.commit().map_err(io)?;
    Ok(removed)
}

/// Makes a new token, appends its hash line to the token file (created with
/// mode 0600 if missing) and returns the token, which is shown only this once.
pub fn create(path: &Path, name: &str) -> Result<NewToken, TokenError> {
    if !valid_name(name) {
        return Err(TokenError::BadName);
    }
    let io = |source| TokenError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Refuse to append to a file we could not read back.
    if path.exists() {
        TokenStore::load(path)?;
    }
    let mut raw = Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut *raw).map_err(|e| TokenError::Random(e.to_string()))?;
    let secret = Zeroizing::new(format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(*raw)
    ));
    let created = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .expect("0 is a valid nanosecond")
        .format(&time::format_description::well_known::Rfc3339)
        .expect("a UTC time formats as RFC 3339");
    let line = format!(
        "sha256:{} {name} {created}\n",
        hex::encode(hash(secret.as_bytes()))
    );
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(io)?;
    // A file that does not end in a newline (edited by hand) must not glue our line to its last.
    let len = file.metadata().map_err(io)?.len();
    let needs_newline = len > 0 && !std::fs::read(path).map_err(io)?.ends_with(b"\n");
    if needs_newline {
        file.write_all(b"\n").map_err(io)?;
    }
    file.write_all(line.as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(NewToken {
        secret,
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_strictly() {
        let h = "ab".repeat(32);
        assert!(parse_line(&format!("sha256:{h} ci 2024-01-01T00:00:00Z")).is_some());
        assert!(parse_line(&format!("sha256:{h} ci")).is_none());
        assert!(parse_line(&format!("sha1:{h} ci 2024-01-01T00:00:00Z")).is_none());
        assert!(parse_line(&format!("sha256:{} ci 2024", &h[..62])).is_none());
        assert!(parse_line(&format!("sha256:{h} bad/name 2024")).is_none());
        assert!(parse_line(&format!("sha256:{h} ci 2024 extra")).is_none());
        let store = TokenStore::parse(&format!("# comment\n\nsha256:{h} a 2024\n"), Path::new("t"))
            .unwrap();
        assert_eq!(store.entries().len(), 1);
        assert!(TokenStore::parse("junk\n", Path::new("t")).is_err());
    }

    #[test]
    fn verify_finds_the_right_name() {
        let store = TokenStore {
            entries: ["one", "two", "three"]
                .iter()
                .map(|n| TokenEntry {
                    hash: hash(format!("secret-{n}").as_bytes()),
                    name: n.to_string(),
                    created: "2026-01-01T00:00:00Z".into(),
                })
                .collect(),
            path: None,
        };
        assert_eq!(store.verify(b"secret-two"), Some("two"));
        assert_eq!(store.verify(b"secret-three"), Some("three"));
        assert_eq!(store.verify(b"secret-four"), None);
        assert_eq!(store.verify(b""), None);
        assert_eq!(TokenStore::default().verify(b"secret-one"), None);
    }

    #[test]
    fn live_tokens_follow_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        let alice = create(&path, "alice").unwrap();
        let live = LiveTokens::new(TokenStore::load(&path).unwrap());
        assert!(live.verify(alice.secret.as_bytes()));
        // Created while running: valid at once.
        let bob = create(&path, "bob").unwrap();
        assert!(live.verify(bob.secret.as_bytes()));
        // Revoked while running: refused at once; the others stay.
        assert_eq!(revoke(&path, "alice").unwrap(), 1);
        assert!(!live.verify(alice.secret.as_bytes()));
        assert!(live.verify(bob.secret.as_bytes()));
        assert_eq!(revoke(&path, "nobody").unwrap(), 0);
        // A broken file keeps the previous tokens in force.
        std::fs::write(&path, "garbage\n").unwrap();
        assert!(live.verify(bob.secret.as_bytes()));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("tokens"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the token file stays private");
    }
}
