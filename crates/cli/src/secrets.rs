//! Where keys, passphrases and IVs come from: a file, an environment variable
//! or a prompt; never the command line alone, so that they do not land in shell
//! history or `ps` output. Secrets are wiped from memory when dropped.

use std::io::IsTerminal;
use std::path::Path;

use clustercrypt_engine::{KeySource, MasterKey, Passphrase};
use zeroize::Zeroizing;

use crate::error::CliError;

/// Key options shared by `encrypt` and `decrypt`.
#[derive(Debug, clap::Args)]
pub struct KeyArgs {
    /// Read the passphrase from the first line of FILE.
    #[arg(long, value_name = "FILE", group = "keysrc")]
    pub passphrase_file: Option<std::path::PathBuf>,
    /// Read the passphrase from the environment variable VAR.
    #[arg(long, value_name = "VAR", group = "keysrc")]
    pub passphrase_env: Option<String>,
    /// Use the raw 256-bit key in FILE (see `clustercrypt keygen`).
    #[arg(long, value_name = "FILE", group = "keysrc")]
    pub key_file: Option<std::path::PathBuf>,
}

fn read_secret_file(path: &Path, what: &str) -> Result<Zeroizing<Vec<u8>>, CliError> {
    std::fs::read(path).map(Zeroizing::new).map_err(|e| {
        CliError::Usage(format!(
            "cannot read the {what} file {}: {e}",
            path.display()
        ))
    })
}

fn first_line(bytes: &[u8]) -> Vec<u8> {
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    let line = &bytes[..end];
    line.strip_suffix(b"\r").unwrap_or(line).to_vec()
}

/// Resolves the key source. `confirm` asks twice when prompting (encryption).
pub fn key_source(args: &KeyArgs, confirm: bool) -> Result<KeySource, CliError> {
    match key_material(args, confirm)? {
        KeyMaterial::Key(key) => Ok(KeySource::Key(key)),
        KeyMaterial::Passphrase(mut bytes) => Passphrase::new(std::mem::take(&mut *bytes))
            .map(KeySource::Passphrase)
            .map_err(|e| CliError::Usage(e.to_string())),
    }
}

/// A key or the bytes of a passphrase, as the user gave them: what `remote`
/// sends to the server, which stretches the passphrase itself.
pub enum KeyMaterial {
    /// A raw key (from a key file).
    Key(MasterKey),
    /// The passphrase bytes (never empty).
    Passphrase(Zeroizing<Vec<u8>>),
}

/// Reads the key or passphrase as [`key_source`] does, without stretching it.
pub fn key_material(args: &KeyArgs, confirm: bool) -> Result<KeyMaterial, CliError> {
    let pass = |bytes: Vec<u8>| {
        let bytes = Zeroizing::new(bytes);
        if bytes.is_empty() {
            return Err(CliError::Usage("the passphrase is empty".into()));
        }
        Ok(KeyMaterial::Passphrase(bytes))
    };
    if let Some(path) = &args.key_file {
        let bytes = read_secret_file(path, "key")?;
        return MasterKey::from_key_file(&bytes)
            .map(KeyMaterial::Key)
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())));
    }
    if let Some(path) = &args.passphrase_file {
        let bytes = read_secret_file(path, "passphrase")?;
        return pass(first_line(&bytes));
    }
    if let Some(var) = &args.passphrase_env {
        let value = std::env::var_os(var)
            .ok_or_else(|| CliError::Usage(format!("the environment variable {var} is not set")))?;
        return pass(value.into_encoded_bytes());
    }
    if !std::io::stderr().is_terminal() {
        return Err(CliError::Usage(
            "no key given: use --passphrase-file, --passphrase-env or --key-file \
             (or run in a terminal to be asked for a passphrase)"
                .into(),
        ));
    }
    let first = Zeroizing::new(rpassword::prompt_password("Passphrase: ").map_err(|e| {
        CliError::Usage(format!("cannot read a passphrase from the terminal: {e}"))
    })?);
    if confirm {
        let again = Zeroizing::new(
            rpassword::prompt_password("Passphrase (again): ")
                .map_err(|e| CliError::Usage(format!("cannot read a passphrase: {e}")))?,
        );
        if *first != *again {
            return Err(CliError::Usage("the passphrases do not match".into()));
        }
    }
    pass(first.as_bytes().to_vec())
}

/// Reads hexadecimal bytes (a raw-mode key or IV) from a file or an environment variable.
pub fn hex_from(
    file: Option<&Path>,
    env: Option<&str>,
    what: &str,
) -> Result<Option<Zeroizing<Vec<u8>>>, CliError> {
    let text: Zeroizing<Vec<u8>> = match (file, env) {
        (Some(path), _) => read_secret_file(path, what)?,
        (None, Some(var)) => Zeroizing::new(
            std::env::var_os(var)
                .ok_or_else(|| {
                    CliError::Usage(format!("the environment variable {var} is not set"))
                })?
                .into_encoded_bytes(),
        ),
        (None, None) => return Ok(None),
    };
    let digits: Zeroizing<Vec<u8>> = Zeroizing::new(
        text.iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect(),
    );
    let mut out = Zeroizing::new(vec![0u8; digits.len() / 2]);
    if !digits.len().is_multiple_of(2) || hex::decode_to_slice(&*digits, &mut out).is_err() {
        return Err(CliError::Usage(format!(
            "the {what} must be hexadecimal digits"
        )));
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_strips_newlines() {
        assert_eq!(first_line(b"secret\nnext"), b"secret");
        assert_eq!(first_line(b"secret\r\n"), b"secret");
        assert_eq!(first_line(b"secret"), b"secret");
    }
}
