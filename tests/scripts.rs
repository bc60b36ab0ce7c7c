//! The installers (`scripts/ensure-nats`, `scripts/ensure-test-tools` and
//! `scripts/apt-install` and `scripts/unpack-deb` under them) as a fresh machine runs them. Nothing is installed on
//! the machine that runs the tests: stand-ins for apt-get, dpkg-query, update-alternatives,
//! cargo and systemctl keep a log of how they were called and a table of the system's
//! defaults, on a `PATH` that has none of the tools the scripts look for. With
//! `RACING_INSTALL=print` a script prints the command and installs nothing; otherwise it
//! lists what apt-get adds before adding it, leaves out what Debian recommends, and leaves
//! the system's defaults as they were.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// A stand-in machine: a `bin/` of stand-ins and of the plain tools a script needs, the
/// log the stand-ins keep, and the defaults' table (`update-alternatives
/// --get-selections`).
struct Machine {
    dir: TempDir,
}

/// What each stand-in does, as a shell script: it logs its arguments, then answers.
const STAND_INS: &[(&str, &str)] = &[
    (
        "apt-get",
        r#"case " $* " in
  *" -s "*) for p in "$@"; do case "$p" in -*) ;; install) ;; *) echo "Inst $p (1.0 Debian:12)"; echo "Inst lib$p-dep (1.0 Debian:12)";; esac; done ;;
  *" install "*)
    echo "[apt-get installs: $*]" >&2
    # Debian's chromium makes itself the default web browser.
    case " $* " in *" chromium "*) echo "x-www-browser auto /usr/bin/chromium" >> "$MACHINE/alternatives"
      echo "gnome-www-browser auto /usr/bin/chromium" >> "$MACHINE/alternatives";; esac ;;
esac"#,
    ),
    (
        "update-alternatives",
        r#"case "$1" in
  --get-selections) cat "$MACHINE/alternatives" ;;
  --remove) grep -v "^$2 .* $3\$" "$MACHINE/alternatives" > "$MACHINE/left" || true; mv "$MACHINE/left" "$MACHINE/alternatives" ;;
esac"#,
    ),
    ("dpkg-query", "exit 1"),
    (
        "cargo",
        r#"case "$1 $2" in "nextest --version") exit 1 ;; esac"#,
    ),
    ("systemctl", "exit 0"),
    // Unpacks a package's programs (scripts/unpack-deb): here, empty stand-ins of them.
    (
        "dpkg",
        r#"case "$1" in -x) mkdir -p "$3/usr/sbin" "$3/usr/bin"
  touch "$3/usr/sbin/nginx" "$3/usr/bin/promtool"
  chmod +x "$3/usr/sbin/nginx" "$3/usr/bin/promtool" ;; esac"#,
    ),
    ("sudo", r#""$@""#),
];

/// The plain tools the scripts run, from the machine's own.
const TOOLS: &[&str] = &[
    "bash", "id", "dirname", "basename", "awk", "wc", "grep", "cat", "mv", "mktemp", "chmod",
    "mkdir", "rm", "touch",
];

impl Machine {
    fn new() -> Machine {
        let dir = TempDir::new().expect("temp dir");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("bin/");
        for (name, body) in STAND_INS {
            let path = bin.join(name);
            let script = format!("#!/bin/bash\necho \"{name} $*\" >> \"$MACHINE/log\"\n{body}\n");
            std::fs::write(&path, script).expect("a stand-in");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .expect("executable");
        }
        for tool in TOOLS {
            let real = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.is_file())
                .unwrap_or_else(|| panic!("{tool} on this machine"));
            std::os::unix::fs::symlink(real, bin.join(tool)).expect("a link");
        }
        // A default of the system's own, which no install touches.
        std::fs::write(
            dir.path().join("alternatives"),
            "editor manual /usr/bin/vim.basic\n",
        )
        .expect("the defaults");
        Machine { dir }
    }

    /// Runs `script` (a path of the repository) on this machine, with `env` set.
    fn run(&self, script: &str, env: &[(&str, &str)]) -> Output {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(script);
        let mut command = Command::new(path);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("RACING_") {
                command.env_remove(name);
            }
        }
        command
            .env("PATH", self.dir.path().join("bin"))
            .env("MACHINE", self.dir.path())
            .env("UNPACK_DIR", self.dir.path().join("tools"))
            .envs(env.iter().copied())
            .output()
            .expect("the script runs")
    }

    /// How the stand-ins were called, a line each.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    fn alternatives(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("alternatives")).expect("the defaults")
    }
}

fn said(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn with_racing_install_print_the_installers_print_the_command_and_install_nothing() {
    let machine = Machine::new();
    let tools = machine.run("scripts/ensure-test-tools", &[("RACING_INSTALL", "print")]);
    let text = said(&tools);
    assert_eq!(tools.status.code(), Some(3), "{text}");
    let command = text
        .lines()
        .find(|l| l.contains("apt-get install -y --no-install-recommends "))
        .unwrap_or_else(|| panic!("no install command:\n{text}"));
    for package in ["chromium", "dbus-x11", "chromium-driver"] {
        assert!(
            command.split_whitespace().any(|w| w == package),
            "{command}"
        );
    }
    assert!(
        text.contains("cargo install --locked cargo-nextest"),
        "{text}"
    );
    let nats = machine.run("scripts/ensure-nats", &[("RACING_INSTALL", "print")]);
    let text = said(&nats);
    assert_eq!(nats.status.code(), Some(3), "{text}");
    assert!(
        text.contains("apt-get install -y --no-install-recommends nats-server"),
        "{text}"
    );
    let log = machine.log();
    for call in [
        "apt-get",
        "cargo install",
        "update-alternatives --remove",
        "systemctl",
    ] {
        assert!(
            !log.lines().any(|l| l.starts_with(call)),
            "`{call}` run:\n{log}"
        );
    }
}

#[test]
fn an_install_lists_what_apt_adds_before_it_adds_it_and_leaves_the_default_browser_alone() {
    let machine = Machine::new();
    let out = machine.run("scripts/ensure-test-tools", &[]);
    let text = said(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", machine.log());
    // Every package apt-get adds, named before it adds them.
    let listed = text
        .lines()
        .position(|l| {
            l.starts_with("apt-get adds ")
                && l.contains(": ")
                && l.contains(" chromium libchromium-dep ")
        })
        .unwrap_or_else(|| panic!("no list of what apt-get adds:\n{text}"));
    let installed = text
        .lines()
        .position(|l| l.starts_with("[apt-get installs:"))
        .unwrap_or_else(|| panic!("nothing installed:\n{text}"));
    assert!(listed < installed, "{text}");
    let log = machine.log();
    let installs: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("apt-get") && l.contains(" install "))
        .collect();
    assert!(!installs.is_empty(), "{log}");
    for call in installs {
        assert!(call.contains("--no-install-recommends"), "{call}");
    }
    // Chromium made itself the default web browser; that is undone, and nothing else is
    // touched.
    assert_eq!(
        machine.alternatives(),
        "editor manual /usr/bin/vim.basic\n",
        "{log}"
    );
    assert!(
        log.contains("update-alternatives --remove x-www-browser /usr/bin/chromium"),
        "{log}"
    );
    // nginx and promtool are fetched and unpacked, never installed: their packages would
    // start a server.
    for package in ["nginx", "prometheus"] {
        assert!(
            log.lines()
                .any(|l| l.starts_with("apt-get ")
                    && l.ends_with(&format!(" download -qq {package}"))),
            "{log}"
        );
        assert!(
            !log.lines().any(|l| l.starts_with("apt-get")
                && l.contains(" install ")
                && l.split_whitespace().any(|w| w == package)),
            "{package} installed:\n{log}"
        );
    }
    for program in ["nginx/usr/sbin/nginx", "prometheus/usr/bin/promtool"] {
        assert!(
            machine.dir.path().join("tools").join(program).exists(),
            "{program}"
        );
    }
}
