//! The run's identity: everything that decides a run's work and the order
//! of its collectives, as one value that every process compares before it
//! starts.
//!
//! Processes of one job that differ in any of it would take different
//! windows or epochs, and then wait forever in mismatched collectives (or
//! write other bytes). So [`Identity`] holds the build, the plan, every
//! [`Options`] field and every tunable, and [`check_same`] refuses a job
//! whose processes differ, with one line naming the first field that
//! differs. Nothing can be left out by accident: the options are
//! destructured field by field below (a new field does not compile until
//! it is named here), and the tunables are serialized whole.

use super::options::Options;
use super::plan::{Plan, TOOL_VERSION};
use super::tunables::Tunables;
use crate::cluster::Comm;
use serde_json::{json, Value};

/// One process's identity: named fields, in the order they are compared.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    fields: Vec<(String, Value)>,
}

impl Identity {
    /// The identity of a run of `plan` with `opts` by the executable whose
    /// SHA-256 is `executable`, with these tunables.
    pub fn new(executable: &str, plan: &Plan, opts: &Options, tunables: &Tunables) -> Self {
        // Every field, by name: a field added to Options must be named here.
        // (`stop` is a request, not a setting: one process may be asked alone.)
        let Options { out, force, max_memory, work_dir, checkpoint_seconds, check_samples, stop: _ } = opts;
        let mut fields = vec![
            ("chomp version".to_string(), json!(TOOL_VERSION)),
            ("executable (SHA-256)".to_string(), json!(executable)),
            ("job (universe, Grundy range, table layout)".to_string(), json!(format!("{plan:?}"))),
            ("output directory (--out)".to_string(), json!(out)),
            ("--force".to_string(), json!(force)),
            ("--max-memory".to_string(), json!(max_memory)),
            ("--work-dir".to_string(), json!(work_dir)),
            ("checkpoint interval".to_string(), json!(checkpoint_seconds)),
            ("--check-samples".to_string(), json!(check_samples)),
        ];
        // Every tunable, by its variable's name.
        let Value::Object(t) = serde_json::to_value(tunables).expect("tunables serialize") else { unreachable!("a struct is an object") };
        fields.extend(t.into_iter().map(|(k, v)| (format!("CHOMP_{}", k.to_uppercase()), v)));
        Identity { fields }
    }

    /// This process's identity: the running executable's SHA-256 (hashed in
    /// pieces: read whole, tens of MB with its debug lines would stay in
    /// every process's peak memory) and this process's tunables.
    pub fn of_this_process(plan: &Plan, opts: &Options) -> Self {
        let exe = std::env::current_exe().and_then(|p| crate::store::file_sha256(&p)).map(|(_, sha)| sha).unwrap_or_default();
        Identity::new(&exe, plan, opts, super::tunables::get())
    }

    fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.fields).expect("an identity serializes")
    }

    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok().map(|fields| Identity { fields })
    }

    /// The first field where `other` differs from this identity: its name
    /// and both values.
    pub fn first_difference(&self, other: &Identity) -> Option<(String, String, String)> {
        let show = |v: Option<&Value>| match v {
            None | Some(Value::Null) => "unset".to_string(),
            Some(v) => v.to_string(),
        };
        let theirs = |name: &str| other.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        for (name, mine) in &self.fields {
            if theirs(name) != Some(mine) {
                return Some((name.clone(), show(Some(mine)), show(theirs(name))));
            }
        }
        other.fields.iter().find(|(n, _)| !self.fields.iter().any(|(m, _)| m == n)).map(|(n, v)| (n.clone(), "unset".into(), show(Some(v))))
    }
}

/// Refuses a job whose processes differ in their identity (a collective:
/// every process calls it first, and every process finds the same answer).
///
/// # Errors
/// One line naming the first process that differs from process 0 and the
/// first field it differs in, with both values.
pub fn check_same(mine: &Identity, comm: &dyn Comm) -> Result<(), String> {
    let all = comm.all_gather(&mine.to_bytes());
    let Some(first) = Identity::from_bytes(&all[0]) else {
        return Err("process 0 sent an identity this build cannot read: every process must run the same build".into());
    };
    for (p, bytes) in all.iter().enumerate().skip(1) {
        let Some(theirs) = Identity::from_bytes(bytes) else {
            return Err(format!("process {p} sent an identity this build cannot read: every process must run the same build"));
        };
        if let Some((name, want, got)) = first.first_difference(&theirs) {
            return Err(format!(
                "process {p} was started with another {name} than process 0 ({got} against {want}): every process of a job must run the same build with the same options"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Universe;

    #[test]
    fn every_option_and_tunable_is_part_of_the_identity() {
        let plan = Plan::new(Universe::tiles(30), 10);
        let base = Options::new("out/x");
        let id = |o: &Options, t: &Tunables| Identity::new("abc", &plan, o, t);
        let t0 = super::super::tunables::DEFAULT;
        let same = id(&base, &t0);
        assert_eq!(same.first_difference(&id(&base, &t0)), None);
        let cases: Vec<(Options, &str)> = vec![
            (Options { max_memory: Some(3 << 20), ..base.clone() }, "--max-memory"),
            (Options { work_dir: Some("/tmp/w".into()), ..base.clone() }, "--work-dir"),
            (Options { check_samples: 7, ..base.clone() }, "--check-samples"),
            (Options { force: true, ..base.clone() }, "--force"),
            (Options { checkpoint_seconds: 0.0, ..base.clone() }, "checkpoint interval"),
            (Options::new("out/y"), "output directory (--out)"),
        ];
        for (o, name) in cases {
            assert_eq!(same.first_difference(&id(&o, &t0)).map(|d| d.0), Some(name.to_string()));
        }
        let t = Tunables { collective_bytes: Some(65536), ..t0.clone() };
        assert_eq!(same.first_difference(&id(&base, &t)), Some(("CHOMP_COLLECTIVE_BYTES".into(), "unset".into(), "65536".into())));
        let other_plan = Identity::new("abc", &Plan::new(Universe::tiles(31), 10), &base, &t0);
        assert!(same.first_difference(&other_plan).unwrap().0.starts_with("job"));
        assert!(same.first_difference(&Identity::new("abd", &plan, &base, &t0)).unwrap().0.starts_with("executable"));
        // Every tunable has a name CHOMP_* that the run accepts.
        for (name, _) in &same.fields {
            assert!(!name.starts_with("CHOMP_") || super::super::tunables::NAMES.contains(&name.as_str()), "{name}");
        }
        assert_eq!(same.fields.iter().filter(|(n, _)| n.starts_with("CHOMP_")).count(), super::super::tunables::NAMES.len());
    }

    #[test]
    fn processes_that_differ_are_refused_with_the_option_named() {
        let plan = Plan::new(Universe::tiles(30), 10);
        let got = crate::cluster::ThreadCluster::new(3).run(|comm| {
            let limit = (comm.process() == 2).then_some(1 << 30);
            let me = Identity::new("abc", &plan, &Options { max_memory: limit, ..Options::new("o") }, &super::super::tunables::DEFAULT);
            check_same(&me, comm)
        });
        for r in got {
            let e = r.unwrap().unwrap_err();
            assert_eq!(e, "process 2 was started with another --max-memory than process 0 (1073741824 against unset): every process of a job must run the same build with the same options");
        }
    }
}
