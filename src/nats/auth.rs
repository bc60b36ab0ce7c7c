//! Who may do what on NATS: the roles of a deployment, the subjects each may publish and
//! subscribe to, and the credentials directory that holds one nkey per user.
//!
//! Users are nkeys (ed25519 key pairs): the server's configuration holds only public keys,
//! and a client proves it holds the seed by signing the server's nonce, so neither a
//! leaked server config nor a captured connection gives anyone a credential. Roles are
//! per-user permissions in one account, which the Debian nats-server 2.9 reads from a
//! plain config file: no operator, JWT resolver or account server to run.
//!
//! A credentials directory holds `<user>.nk` files (the seed, owner-only) whose name says
//! the role (`setup`, `service`, `feeder`, `keys-admin`, optionally `-<name>` after it), the
//! cluster's route password, and `auth.conf`, the `authorization` block rendered from the
//! seeds present: adding, rotating or removing a user is changing a file and re-rendering.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};

use super::buckets::{self, Bucket};
use super::subjects;

/// What a NATS user of the deployment is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `racing setup`, run once per deployment and after an upgrade: makes and updates
    /// the stream and its buckets. Deletes and purges nothing, reads no message.
    Setup,
    /// `racing serve`: reads the log through consumers of its own making, reads and
    /// writes the values of its buckets. Changes no stream, publishes no event.
    Service,
    /// An upstream feeder: publishes events under `racing.>` and reads the
    /// acknowledgements; nothing else.
    Feeder,
    /// `racing keys`: the key buckets, nothing else.
    KeysAdmin,
}

impl Role {
    /// Every role, in the order `auth.conf` lists them.
    pub const ALL: [Role; 4] = [Role::Setup, Role::Service, Role::Feeder, Role::KeysAdmin];

    /// The name of the role, which starts the file name of its users' seeds.
    pub fn name(self) -> &'static str {
        match self {
            Role::Setup => "setup",
            Role::Service => "service",
            Role::Feeder => "feeder",
            Role::KeysAdmin => "keys-admin",
        }
    }

    /// The prefix of the reply subjects a client of this role makes (its requests'
    /// answers and its consumers' deliveries). Each role may subscribe only under its
    /// own, so no user reads another role's answers; NATS clients default to `_INBOX`,
    /// which nobody may subscribe to here.
    pub fn inbox_prefix(self) -> &'static str {
        match self {
            Role::Setup => "_INBOX_RACING_SETUP",
            Role::Service => "_INBOX_RACING_SERVICE",
            Role::Feeder => "_INBOX_RACING_FEEDER",
            Role::KeysAdmin => "_INBOX_RACING_KEYS",
        }
    }

    /// The role a seed file's name gives: `feeder.nk`, `feeder-hkjc.nk`, ...
    pub fn of_user(user: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| {
            user == r.name()
                || user
                    .strip_prefix(r.name())
                    .is_some_and(|rest| rest.starts_with('-') && rest.len() > 1)
        })
    }

    /// What a user of this role may publish and subscribe to, for the stream `stream`.
    pub fn permissions(self, stream: &str) -> Permissions {
        let api = "$JS.API";
        let buckets = |all: &[Bucket]| all.iter().map(|b| b.name(stream)).collect::<Vec<_>>();
        let snapshot_bucket = buckets::snapshots_name(stream);
        let snapshots = format!("OBJ_{snapshot_bucket}");
        // Reading a stream and following a key-value bucket: information, direct gets,
        // consumers, flow control. The client makes its ordered consumers again after a
        // gap (a restarted or re-elected server) under a name of its own (`{name}_{n}`),
        // and deletes the old one by name; neither can be narrowed to the consumers a user
        // made (a consumer's name is one subject token, and a wildcard matches whole
        // tokens only): making and removing consumers is allowed on the streams the user
        // reads, and those alone. The stream itself stays as the set-up made it.
        let read = |stream: &str| {
            vec![
                format!("{api}.STREAM.INFO.{stream}"),
                format!("{api}.STREAM.MSG.GET.{stream}"),
                format!("{api}.DIRECT.GET.{stream}"),
                format!("{api}.DIRECT.GET.{stream}.>"),
                format!("{api}.CONSUMER.CREATE.{stream}"),
                format!("{api}.CONSUMER.CREATE.{stream}.>"),
                format!("{api}.CONSUMER.MSG.NEXT.{stream}.*"),
                format!("{api}.CONSUMER.INFO.{stream}.*"),
                format!("{api}.CONSUMER.DELETE.{stream}.*"),
                format!("$JS.FC.{stream}.>"),
            ]
        };
        // Reading and writing a bucket's values; its stream stays as the set-up made it.
        let bucket = |name: &str| {
            let mut subjects = read(&format!("KV_{name}"));
            subjects.push(format!("$KV.{name}.>"));
            subjects
        };
        let mut publish = match self {
            Role::Setup => {
                let mut p = vec![format!("{api}.INFO")];
                let streams = std::iter::once(stream.to_owned())
                    .chain(
                        buckets(&buckets::ALL)
                            .into_iter()
                            .map(|b| format!("KV_{b}")),
                    )
                    .chain([snapshots.clone()]);
                for s in streams {
                    for call in ["INFO", "CREATE", "UPDATE"] {
                        p.push(format!("{api}.STREAM.{call}.{s}"));
                    }
                }
                // The snapshots are a copy of what the log rebuilds: the set-up alone
                // may delete their bucket, never the log's.
                p.push(format!("{api}.STREAM.DELETE.{snapshots}"));
                p
            }
            Role::Service => {
                let mut p = vec![format!("{api}.INFO")];
                p.extend(read(stream));
                for name in buckets(&buckets::ALL) {
                    p.extend(bucket(&name));
                }
                // Writing and reading snapshots, and removing old ones (the object
                // store purges an object's chunks); never deleting the bucket.
                p.extend(read(&snapshots));
                p.push(format!("$O.{snapshot_bucket}.>"));
                p.push(format!("{api}.STREAM.PURGE.{snapshots}"));
                p
            }
            Role::Feeder => vec![racing_events::ALL_SUBJECTS.to_owned()],
            Role::KeysAdmin => {
                let mut p = vec![format!("{api}.INFO")];
                for name in buckets(&[buckets::KEYS, buckets::KEY_USAGE]) {
                    p.extend(bucket(&name));
                }
                p
            }
        };
        let mut subscribe = vec![format!("{}.>", self.inbox_prefix())];
        // Each replica's use of keys, reported to the others.
        if self == Role::Service {
            publish.push(subjects::rate_use_all(stream));
            subscribe.push(subjects::rate_use_all(stream));
        }
        Permissions { publish, subscribe }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The subjects a user may publish to and subscribe to; everything else is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permissions {
    /// Subjects it may publish to.
    pub publish: Vec<String>,
    /// Subjects it may subscribe to.
    pub subscribe: Vec<String>,
}

/// One user of the credentials directory.
#[derive(Clone)]
pub struct User {
    /// The file name without `.nk`: `service`, `feeder-hkjc`, ...
    pub name: String,
    /// What it may do.
    pub role: Role,
    seed: String,
    public_key: String,
}

impl User {
    /// What this user may publish and subscribe to: its role's, and for a feeder, the
    /// reading of its own refusals ([`buckets::REFUSALS`], keys `{name}.*`): making,
    /// looking up and removing the consumers of its own names
    /// ([`subjects::refusals_reader`]), each filtered to its own keys, and listening
    /// where they deliver. Nothing else of the bucket's stream: no look at the stream
    /// (which lists every feeder's keys), no consumer of another name (another feeder's
    /// to remove, or one delivering to the role's inbox, where every feeder may listen),
    /// no direct get (answered there too).
    pub fn permissions(&self, stream: &str) -> Permissions {
        let mut p = self.role.permissions(stream);
        if self.role == Role::Feeder {
            let api = "$JS.API";
            let bucket = buckets::REFUSALS.name(stream);
            let kv = format!("KV_{bucket}");
            for slot in 0..subjects::REFUSAL_READERS {
                let name = subjects::refusals_reader(&self.name, slot);
                p.publish.extend([
                    format!(
                        "{api}.CONSUMER.CREATE.{kv}.{name}.$KV.{bucket}.{}.>",
                        self.name
                    ),
                    format!("{api}.CONSUMER.INFO.{kv}.{name}"),
                    format!("{api}.CONSUMER.DELETE.{kv}.{name}"),
                ]);
            }
            p.subscribe.push(format!(
                "{}.>",
                subjects::refusals_delivery(stream, &self.name)
            ));
        }
        p
    }

    /// The nkey seed: the user's private key.
    pub fn seed(&self) -> &str {
        &self.seed
    }

    /// The public key the server knows the user by.
    pub fn public_key(&self) -> &str {
        &self.public_key
    }
}

impl fmt::Debug for User {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("User")
            .field("name", &self.name)
            .field("role", &self.role)
            .field("public_key", &self.public_key)
            .finish_non_exhaustive()
    }
}

/// A credentials directory: the users of a deployment and the cluster's route password.
#[derive(Debug, Clone)]
pub struct Credentials {
    dir: PathBuf,
    stream: String,
    users: Vec<User>,
}

/// File name of the server's `authorization` block in a credentials directory.
pub const AUTH_CONF: &str = "auth.conf";
/// File name of the cluster's route password in a credentials directory.
pub const ROUTE_PASSWORD: &str = "route.password";

impl Credentials {
    /// Opens the credentials directory `dir` for the stream `stream`, making it (owner
    /// only) and a seed for each role that has no user yet, and the route password if
    /// missing; then renders `auth.conf`. Seeds already there are kept.
    pub fn ensure(dir: &Path, stream: &str) -> anyhow::Result<Credentials> {
        make_private_dir(dir)?;
        for role in Role::ALL {
            let path = dir.join(format!("{}.nk", role.name()));
            if !path.exists() {
                crate::files::write_private(&path, format!("{}\n", new_seed()?).as_bytes())?;
            }
        }
        let route = dir.join(ROUTE_PASSWORD);
        if !route.exists() {
            crate::files::write_private(
                &route,
                format!("{:032x}\n", rand::random::<u128>()).as_bytes(),
            )?;
        }
        let credentials = Credentials::open(dir, stream)?;
        credentials.render()?;
        Ok(credentials)
    }

    /// Reads the users of an existing credentials directory.
    pub fn open(dir: &Path, stream: &str) -> anyhow::Result<Credentials> {
        let mut users = Vec::new();
        let entries =
            std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".nk"))
            else {
                continue;
            };
            let Some(role) = Role::of_user(name) else {
                tracing::warn!(file = %path.display(), "seed file of no known role ignored");
                continue;
            };
            let seed = read_seed(&path)?;
            let public_key = nkeys::KeyPair::from_seed(&seed)
                .map_err(|e| anyhow::anyhow!("{}: not an nkey seed ({e})", path.display()))?
                .public_key();
            users.push(User {
                name: name.to_owned(),
                role,
                seed,
                public_key,
            });
        }
        users.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Credentials {
            dir: dir.to_owned(),
            stream: stream.to_owned(),
            users,
        })
    }

    /// Where the credentials are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every user, by name.
    pub fn users(&self) -> &[User] {
        &self.users
    }

    /// The user named `name`.
    pub fn user(&self, name: &str) -> Option<&User> {
        self.users.iter().find(|u| u.name == name)
    }

    /// The seed file of the user named `name`.
    pub fn seed_file(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.nk"))
    }

    /// The first user of `role`: the one the embedded server's own commands use.
    pub fn first(&self, role: Role) -> anyhow::Result<&User> {
        self.user(role.name())
            .or_else(|| self.users.iter().find(|u| u.role == role))
            .with_context(|| format!("no {role} user in {}", self.dir.display()))
    }

    /// The cluster's route password.
    pub fn route_password(&self) -> anyhow::Result<String> {
        read_seed(&self.dir.join(ROUTE_PASSWORD))
    }

    /// Adds a user (`<role>-<name>`) with a fresh seed; fails if it exists.
    pub fn add(&mut self, role: Role, name: &str) -> anyhow::Result<&User> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            bail!("a user name is letters, digits, `-` and `_`; `{name}` is not");
        }
        let user = format!("{}-{name}", role.name());
        let path = self.seed_file(&user);
        if path.exists() {
            bail!("{user} exists already; rotate it instead");
        }
        crate::files::write_private(&path, format!("{}\n", new_seed()?).as_bytes())?;
        self.reload(&user)
    }

    /// Gives the user `name` a fresh seed: the old one is refused once the server has
    /// reloaded `auth.conf`.
    pub fn rotate(&mut self, name: &str) -> anyhow::Result<&User> {
        let path = self.seed_file(name);
        if !path.exists() {
            bail!("no user {name} in {}", self.dir.display());
        }
        crate::files::write_private(&path, format!("{}\n", new_seed()?).as_bytes())?;
        self.reload(name)
    }

    /// Removes the user `name`.
    pub fn remove(&mut self, name: &str) -> anyhow::Result<()> {
        let path = self.seed_file(name);
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        *self = Credentials::open(&self.dir, &self.stream)?;
        self.render()
    }

    fn reload(&mut self, name: &str) -> anyhow::Result<&User> {
        *self = Credentials::open(&self.dir, &self.stream)?;
        self.render()?;
        self.user(name)
            .with_context(|| format!("{name} vanished from {}", self.dir.display()))
    }

    /// The server's `authorization` block for these users.
    pub fn authorization(&self) -> String {
        self.authorization_with("")
    }

    /// The server's `authorization` block for these users and `more`: entries of its
    /// `users` list, as nats-server configuration, for users that are not of a role (a
    /// local server's WebSocket user).
    pub fn authorization_with(&self, more: &str) -> String {
        let list = |subjects: &[String]| {
            subjects
                .iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = String::from(
            "# Written by `racing credentials`: one nkey user per seed file beside it.\n\
             # Only public keys are here; the seeds stay with their users.\n\
             authorization {\n  users = [\n",
        );
        for user in &self.users {
            let p = user.permissions(&self.stream);
            text.push_str(&format!(
                "    # {} ({})\n    {{ nkey: \"{}\", permissions: {{\n        publish: {{ allow: [{}] }}\n        subscribe: {{ allow: [{}] }}\n    }} }}\n",
                user.name,
                user.role,
                user.public_key,
                list(&p.publish),
                list(&p.subscribe),
            ));
        }
        text.push_str(more);
        text.push_str("  ]\n}\n");
        text
    }

    /// Writes `auth.conf`, the block a server's configuration includes.
    pub fn render(&self) -> anyhow::Result<()> {
        let path = self.dir.join(AUTH_CONF);
        let tmp = self.dir.join(format!("{AUTH_CONF}.tmp"));
        std::fs::write(&tmp, self.authorization())
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))
    }
}

fn new_seed() -> anyhow::Result<String> {
    nkeys::KeyPair::new_user()
        .seed()
        .map_err(|e| anyhow::anyhow!("making an nkey: {e}"))
}

/// Reads a secret file: its first non-empty line, trimmed (a seed or a password).
pub fn read_seed(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the secret in {}", path.display()))?;
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .with_context(|| format!("{} is empty", path.display()))
}

fn make_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("making {} owner-only", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_file_name_gives_its_role() {
        assert_eq!(Role::of_user("service"), Some(Role::Service));
        assert_eq!(Role::of_user("feeder-hkjc"), Some(Role::Feeder));
        assert_eq!(Role::of_user("keys-admin"), Some(Role::KeysAdmin));
        assert_eq!(Role::of_user("keys-admin-ops"), Some(Role::KeysAdmin));
        for none in ["feeder-", "feeders", "admin", "", "servicex"] {
            assert_eq!(Role::of_user(none), None, "{none}");
        }
    }

    #[test]
    fn a_feeder_may_publish_events_and_read_its_answers_only() {
        let p = Role::Feeder.permissions("RACING");
        assert_eq!(p.publish, ["racing.>"]);
        assert_eq!(p.subscribe, ["_INBOX_RACING_FEEDER.>"]);
        let keys = Role::KeysAdmin.permissions("RACING");
        assert!(keys.publish.iter().all(|s| s == "$JS.API.INFO"
            || s.contains("KV_RACING_KEYS")
            || s.contains("KV_RACING_KEY_USAGE")
            || s.starts_with("$KV.RACING_KEY")));
        let service = Role::Service.permissions("RACING");
        for never in ["racing.>", "$JS.API.STREAM.DELETE.RACING", "$JS.API.>", ">"] {
            assert!(!service.publish.iter().any(|s| s == never), "{never}");
        }
    }

    #[test]
    fn only_the_service_writes_snapshots_and_only_the_set_up_deletes_their_bucket() {
        let objects = "$O.RACING_SNAPSHOTS.>";
        let delete = "$JS.API.STREAM.DELETE.OBJ_RACING_SNAPSHOTS";
        for role in Role::ALL {
            let p = role.permissions("RACING");
            let writes = p.publish.iter().any(|s| s == objects);
            assert_eq!(writes, role == Role::Service, "{role} writes snapshots");
            let deletes = p.publish.iter().any(|s| s == delete);
            assert_eq!(deletes, role == Role::Setup, "{role} deletes the bucket");
            assert!(
                !p.publish.iter().any(|s| s.contains("STREAM.DELETE.RACING")
                    || s.contains("STREAM.PURGE.RACING")
                    || s.contains("STREAM.DELETE.KV_")),
                "{role}: nobody deletes or purges the log or a key-value bucket"
            );
        }
    }

    #[test]
    fn only_the_set_up_may_change_streams_and_it_may_delete_or_read_nothing_but_snapshots() {
        let changes = |s: &String| s.contains(".STREAM.CREATE.") || s.contains(".STREAM.UPDATE.");
        for role in [Role::Service, Role::Feeder, Role::KeysAdmin] {
            let p = role.permissions("RACING");
            assert!(!p.publish.iter().any(changes), "{role}: {:?}", p.publish);
            assert!(
                !p.publish.iter().any(|s| s.contains("DURABLE")),
                "{role}: not the durable consumers' own API"
            );
        }
        let setup = Role::Setup.permissions("RACING");
        for stream in ["RACING", "KV_RACING_KEYS", "KV_RACING_SIGNUPS"] {
            for call in ["CREATE", "UPDATE"] {
                let subject = format!("$JS.API.STREAM.{call}.{stream}");
                assert!(setup.publish.contains(&subject), "{subject}");
            }
        }
        // Deleting the snapshots' bucket is the one delete: they are a copy of what the
        // log rebuilds.
        assert!(setup.publish.iter().all(|s| s == "$JS.API.INFO"
            || s.starts_with("$JS.API.STREAM.INFO.")
            || changes(s)
            || s == "$JS.API.STREAM.DELETE.OBJ_RACING_SNAPSHOTS"));
        assert_eq!(setup.subscribe, ["_INBOX_RACING_SETUP.>"]);
        assert_eq!(Role::of_user("setup"), Some(Role::Setup));
    }

    #[test]
    fn a_credentials_directory_is_owner_only_and_keeps_its_seeds() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::TempDir::new().expect("temp dir");
        let path = dir.path().join("credentials");
        let first = Credentials::ensure(&path, "RACING").expect("made");
        let mode = |p: &Path| std::fs::metadata(p).expect("there").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o700);
        assert_eq!(mode(&path.join("feeder.nk")), 0o600);
        assert_eq!(mode(&path.join(ROUTE_PASSWORD)), 0o600);
        let again = Credentials::ensure(&path, "RACING").expect("opened");
        let keys = |c: &Credentials| {
            c.users()
                .iter()
                .map(|u| u.public_key().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(&first), keys(&again));
        let conf = std::fs::read_to_string(path.join(AUTH_CONF)).expect("rendered");
        for user in again.users() {
            assert!(conf.contains(user.public_key()));
            assert!(
                !conf.contains(user.seed()),
                "no seed in the server's config"
            );
        }

        let mut c = again;
        let added = c.add(Role::Feeder, "hkjc").expect("added").clone();
        assert_eq!(added.name, "feeder-hkjc");
        assert!(c.add(Role::Feeder, "hkjc").is_err(), "no overwrite");
        assert!(c.add(Role::Feeder, "a b").is_err());
        let rotated = c.rotate("feeder-hkjc").expect("rotated").clone();
        assert_ne!(added.public_key(), rotated.public_key());
        let conf = std::fs::read_to_string(path.join(AUTH_CONF)).expect("rendered");
        assert!(conf.contains(rotated.public_key()) && !conf.contains(added.public_key()));
        c.remove("feeder-hkjc").expect("removed");
        assert!(c.user("feeder-hkjc").is_none());
    }

    #[test]
    fn a_feeder_user_may_read_its_own_refusals_and_no_other_feeder_s() {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let mut c = Credentials::ensure(&dir.path().join("c"), "RACING").expect("made");
        c.add(Role::Feeder, "hkjc").expect("added");
        let hkjc = c.user("feeder-hkjc").expect("there").permissions("RACING");
        let api = "$JS.API";
        let kv = "KV_RACING_REFUSALS";
        for slot in 0..subjects::REFUSAL_READERS {
            let name = format!("refusals_feeder-hkjc_{slot}");
            for p in [
                format!("{api}.CONSUMER.CREATE.{kv}.{name}.$KV.RACING_REFUSALS.feeder-hkjc.>"),
                format!("{api}.CONSUMER.INFO.{kv}.{name}"),
                format!("{api}.CONSUMER.DELETE.{kv}.{name}"),
            ] {
                assert!(hkjc.publish.contains(&p), "{p}: {hkjc:?}");
            }
        }
        assert!(hkjc
            .subscribe
            .contains(&"RACING_REFUSALS_TO.feeder-hkjc.>".to_owned()));
        // Of the bucket's stream, its own consumers alone: no look at the stream, no
        // consumer of another name, no direct get, no wildcard, and nothing of the plain
        // feeder's.
        let refusals: Vec<&String> = hkjc.publish.iter().filter(|p| p.contains(kv)).collect();
        assert_eq!(refusals.len(), 3 * subjects::REFUSAL_READERS);
        for p in refusals {
            assert!(
                p.contains(".CONSUMER.") && p.contains(".refusals_feeder-hkjc_"),
                "{p}"
            );
            assert!(!p.contains(".*") && !p.ends_with("_REFUSALS.>"), "{p}");
        }
        for p in hkjc.publish.iter().chain(&hkjc.subscribe) {
            assert!(!p.contains(".feeder.") && !p.ends_with(".feeder"), "{p}");
            assert!(!p.contains("_feeder_"), "{p}");
        }
        let plain = c.user("feeder").expect("there").permissions("RACING");
        assert!(plain
            .subscribe
            .contains(&"RACING_REFUSALS_TO.feeder.>".to_owned()));
        assert!(!plain
            .publish
            .iter()
            .chain(&plain.subscribe)
            .any(|s| s.contains("hkjc")));
        // Other roles gain nothing by it.
        let keys = c.first(Role::KeysAdmin).expect("there");
        assert_eq!(
            keys.permissions("RACING"),
            Role::KeysAdmin.permissions("RACING")
        );
    }
}
