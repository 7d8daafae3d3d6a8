#!/usr/bin/env python3
"""End-to-end test of the web page of `clustercrypt serve` in a headless Chromium.

Usage: python3 tests/browser/web_page_test.py [path/to/clustercrypt]
       WEB_PAGE_TEST_MIB=N python3 tests/browser/web_page_test.py ...   (file size, default 24)

Starts the real server on a loopback port with a fresh token file, opens `/`,
encrypts a file through the page, downloads the result, checks that `clustercrypt decrypt` turns the
result back into the original, decrypts it through the page as well, checks
that a wrong passphrase is reported as an error, and that the benchmark table
has rows. Exits non-zero (with the reason) if any of that fails.

Needs Debian's chromium, chromium-driver and python3-selenium.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    # The python3 on PATH may not be Debian's (pyenv); Debian's has the package.
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath(
        "/usr/bin/python3"
    ):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

PASSPHRASE = "Browser-Horse-Battery-Staple-5d2e"
TIMEOUT = 60


def fail(msg):
    raise SystemExit(f"web_page_test: FAIL: {msg}")


class Server:
    """`clustercrypt serve` on 127.0.0.1:0; its stderr is kept for diagnostics."""

    def __init__(self, binary, workdir):
        self.log = []
        self.proc = subprocess.Popen(
            [
                binary, "serve", "--listen", "127.0.0.1:0", "--tokens", "tokens.txt",
                "--bench-results", "bench.json",
            ],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        found = threading.Event()
        self.port = None

        def drain():
            for line in self.proc.stderr:
                self.log.append(line.rstrip("\n"))
                m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    found.set()
            found.set()

        threading.Thread(target=drain, daemon=True).start()
        if not found.wait(30) or self.port is None:
            self.proc.kill()
            fail("the server did not start:\n" + "\n".join(self.log))
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self):
        """SIGTERM, then the exit status (graceful shutdown exits 0)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return None
        return self.proc.returncode


def browser(download_dir):
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.add_experimental_option(
        "prefs",
        {"download.default_directory": download_dir, "download.prompt_for_download": False},
    )
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    opts.binary_location = chromium
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    # Headless Chromium needs downloads allowed explicitly.
    driver.execute_cdp_cmd(
        "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": download_dir}
    )
    return driver


def download(driver, download_dir, name):
    """Clicks the download link as a person would and returns the file's bytes.

    (The page's Content-Security-Policy, connect-src 'self', rightly keeps
    scripts from fetching the blob: URL, so the test goes through a real download.)"""
    path = os.path.join(download_dir, name)
    if os.path.exists(path):
        os.remove(path)
    driver.find_element(By.ID, "download").click()
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        busy = [f for f in os.listdir(download_dir) if f.endswith(".crdownload")]
        if os.path.exists(path) and not busy:
            with open(path, "rb") as f:
                return f.read()
        time.sleep(0.1)
    fail(f"the download of {name} did not arrive (download directory: {os.listdir(download_dir)})")


def run_page(driver, button, path, passphrase, old_href):
    """Picks `path`, types the passphrase, clicks `button`, waits for the outcome.

    Returns (status text, download href, download name)."""
    by = driver.find_element
    pw = by(By.ID, "passphrase")
    pw.clear()
    pw.send_keys(passphrase)
    by(By.ID, "file").send_keys(path)
    by(By.ID, button).click()

    def finished(d):
        status = d.find_element(By.ID, "status").text.strip()
        if status.startswith("error"):
            return status
        if status.startswith("done"):
            links = d.find_elements(By.ID, "download")
            href = links[0].get_attribute("href") if links else None
            if href and href != old_href:
                return status
        return False

    try:
        status = WebDriverWait(driver, TIMEOUT).until(finished)
    except Exception:
        fail(f"{button}: no outcome within {TIMEOUT} s; status is "
             f"{driver.find_element(By.ID, 'status').text!r}")
    links = driver.find_elements(By.ID, "download")
    href = links[0].get_attribute("href") if links else None
    name = links[0].get_attribute("download") if links else None
    return status, href, name


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/debug/clustercrypt")
    if not os.access(binary, os.X_OK):
        fail(f"no clustercrypt binary at {binary}")
    work = tempfile.mkdtemp(prefix="cc-browser-")
    server = driver = None
    try:
        def cli(*args, **kw):
            return subprocess.run([binary, *args], cwd=work, check=True, capture_output=True,
                                  text=True, **kw)

        cli("bench", "--cipher", "aes-cbc", "--key-size", "256", "--no-kdf", "--time", "0.02",
            "--format", "json", "-o", "bench.json")
        token = cli("token", "create", "--tokens", "tokens.txt", "--name", "browser").stdout.strip()
        if not token.startswith("cct_"):
            fail(f"token create printed {token!r}")
        # A browser's fetch() sends the whole body before it reads the answer:
        # 24 MiB is past what the socket buffers hold, so a server that stops
        # reading while its answer is not read stalls here (it did, up to e10fd41).
        mib = float(os.environ.get("WEB_PAGE_TEST_MIB", "24"))
        plain = os.urandom(int(mib * (1 << 20))) + b"end\n"
        src = os.path.join(work, "hello.txt")
        with open(src, "wb") as f:
            f.write(plain)
        with open(os.path.join(work, "pass.txt"), "w") as f:
            f.write(PASSPHRASE + "\n")

        server = Server(binary, work)
        downloads = os.path.join(work, "downloads")
        os.makedirs(downloads)
        driver = browser(downloads)
        driver.get(server.url)
        for el in ("token", "file", "passphrase", "suite", "encrypt", "decrypt", "status", "bench"):
            if not driver.find_elements(By.ID, el):
                fail(f"the page has no element with id {el!r}")

        # The node's benchmark table fills in from GET /v1/bench with the token.
        # Typed, then Tab to the next field, as a person would.
        driver.find_element(By.ID, "token").send_keys(token + Keys.TAB)
        suite = Select(driver.find_element(By.ID, "suite"))
        if len(suite.options) < 2:
            fail("the suite menu offers fewer than two suites")
        try:
            WebDriverWait(driver, TIMEOUT).until(
                lambda d: len(d.find_elements(By.CSS_SELECTOR, "#bench tr td")) > 0
            )
        except Exception:
            fail("the bench table has no rows: "
                 + driver.find_element(By.ID, "bench").get_attribute("outerHTML")[:500])
        rows = [r for r in driver.find_elements(By.CSS_SELECTOR, "#bench tr")
                if r.find_elements(By.TAG_NAME, "td")]
        if not any("aes" in r.text.lower() for r in rows):
            fail(f"the bench table does not show the measured cipher: {[r.text for r in rows]}")

        # Encrypt through the page; decrypt the result with the CLI.
        status, href, name = run_page(driver, "encrypt", src, PASSPHRASE, None)
        if not status.startswith("done"):
            fail(f"encrypt: {status}")
        if name != "hello.txt.ccrypt":
            fail(f"encrypt: the download is named {name!r}, not 'hello.txt.ccrypt'")
        enc = download(driver, downloads, name)
        if not enc.startswith(b"CLCRYPT\x1a"):
            fail(f"encrypt: the result is not a clustercrypt file ({enc[:16]!r})")
        enc_path = os.path.join(work, "hello.txt.ccrypt")
        with open(enc_path, "wb") as f:
            f.write(enc)
        cli("decrypt", "--passphrase-file", "pass.txt", "hello.txt.ccrypt", "-o", "cli.out")
        with open(os.path.join(work, "cli.out"), "rb") as f:
            if f.read() != plain:
                fail("clustercrypt decrypt of the page's result differs from the original")

        # Decrypt through the page.
        status, href2, name = run_page(driver, "decrypt", enc_path, PASSPHRASE, href)
        if not status.startswith("done"):
            fail(f"decrypt: {status}")
        if name != "hello.txt":
            fail(f"decrypt: the download is named {name!r}, not 'hello.txt'")
        if download(driver, downloads, name) != plain:
            fail("the page's decryption differs from the original")

        # A wrong passphrase is an error on the page, not a download.
        status, _, _ = run_page(driver, "decrypt", enc_path, "not-the-passphrase", href2)
        if not status.startswith("error"):
            fail(f"decrypt with a wrong passphrase: status {status!r}")

        for line in server.log:
            if token in line or PASSPHRASE in line:
                fail("the server logged a secret")
        driver.quit()
        driver = None
        code = server.stop()
        if code != 0:
            fail(f"the server exited with {code} on SIGTERM")
        print("web_page_test: ok (encrypt, CLI decrypt, page decrypt, wrong passphrase, "
              f"bench table with {len(rows)} rows)")
    except SystemExit:
        if server is not None:
            print("server log:\n" + "\n".join(server.log[-30:]), file=sys.stderr)
        raise
    finally:
        if driver is not None:
            driver.quit()
        if server is not None and server.proc.poll() is None:
            server.proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
