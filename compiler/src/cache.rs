//! Compilations kept by content hash, so that an unchanged file is not recompiled.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::{CancelFlag, CompileError, CompileOutput, CompileRequest, Toolkit};

/// The key of one compilation: a 128-bit FNV-1a hash of the toolkit (path and
/// version), the source path, the flags, the SASS switch and the text. Stable
/// across runs and Rust versions, so it can name files in a cache folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey(pub u128);

impl CacheKey {
    /// The key of `request` compiled by `toolkit`.
    pub fn new(toolkit: &Toolkit, request: &CompileRequest) -> CacheKey {
        let mut h = Fnv128::new();
        h.field(toolkit.nvcc.display().to_string().as_bytes());
        h.field(toolkit.version.full.as_bytes());
        h.field(request.source_path.display().to_string().as_bytes());
        for a in &request.flags.args {
            h.field(a.as_bytes());
        }
        h.field(if request.sass { b"sass" } else { b"no-sass" });
        h.field(request.text.as_bytes());
        CacheKey(h.0)
    }

    /// 32 hex digits.
    pub fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;

    fn new() -> Fnv128 {
        Fnv128(Self::OFFSET)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u128::from(*b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// A length-prefixed field, so that ("ab", "c") and ("a", "bc") differ.
    fn field(&mut self, bytes: &[u8]) {
        self.bytes(&(bytes.len() as u64).to_le_bytes());
        self.bytes(bytes);
    }
}

/// Finished compilations by [`CacheKey`]: in memory (the most recent `capacity`),
/// and in a folder when one is given (JSON files named by the key; put it outside
/// the workspace, such as the user's cache folder).
///
/// The key hashes the main file's text; the headers it included (outside the toolkit
/// and system folders, see [`CompileOutput::includes`]) are checked by size and
/// modification time on every look-up, so saving a header recompiles its users.
pub struct CompileCache {
    inner: Mutex<Memory>,
    dir: Option<PathBuf>,
    capacity: usize,
}

struct Memory {
    map: HashMap<CacheKey, Entry>,
    order: VecDeque<CacheKey>,
}

/// A kept output and the state of the headers it was compiled with.
#[derive(Clone)]
struct Entry {
    headers: Vec<Stamp>,
    output: Arc<CompileOutput>,
}

/// An [`Entry`] as written to the cache folder.
#[derive(Serialize)]
struct Stored<'a> {
    headers: &'a [Stamp],
    output: &'a CompileOutput,
}

/// An [`Entry`] as read back from the cache folder.
#[derive(Deserialize)]
struct Loaded {
    headers: Vec<Stamp>,
    output: CompileOutput,
}

/// A header's size and modification time when it was compiled.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    path: PathBuf,
    len: u64,
    modified_nanos: u128,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        let modified_nanos = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(Stamp {
            path: path.to_path_buf(),
            len: meta.len(),
            modified_nanos,
        })
    }
}

impl Entry {
    fn new(output: Arc<CompileOutput>) -> Entry {
        Entry {
            headers: output
                .includes
                .iter()
                .filter_map(|p| Stamp::of(p))
                .collect(),
            output,
        }
    }

    /// Whether every header is as it was.
    fn is_fresh(&self) -> bool {
        self.headers.len() == self.output.includes.len()
            && self
                .headers
                .iter()
                .all(|h| Stamp::of(&h.path).as_ref() == Some(h))
    }
}

impl CompileCache {
    /// A cache holding up to 256 compilations in memory, and on disk in `dir` when given.
    pub fn new(dir: Option<PathBuf>) -> CompileCache {
        CompileCache {
            inner: Mutex::new(Memory {
                map: HashMap::new(),
                order: VecDeque::new(),
            }),
            dir,
            capacity: 256,
        }
    }

    /// The cached output for `request`, if any (marked `from_cache`) and if the
    /// headers it included are unchanged.
    pub fn get(&self, toolkit: &Toolkit, request: &CompileRequest) -> Option<Arc<CompileOutput>> {
        let key = CacheKey::new(toolkit, request);
        let in_memory = self.lock().map.get(&key).cloned();
        if let Some(entry) = in_memory {
            if entry.is_fresh() {
                return Some(entry.output);
            }
            self.remove(key);
            return None;
        }
        let dir = self.dir.as_ref()?;
        let text = std::fs::read_to_string(dir.join(format!("{}.json", key.hex()))).ok()?;
        let loaded: Loaded = serde_json::from_str(&text).ok()?;
        let entry = Entry {
            headers: loaded.headers,
            output: Arc::new(loaded.output),
        };
        if !entry.is_fresh() || !entry.output.from_cache {
            self.remove(key);
            return None;
        }
        self.insert_memory(key, entry.clone());
        Some(entry.output)
    }

    /// The cached output for `request`, or a fresh compilation that is then kept.
    /// Only successful compilations are kept: not failed, cancelled or timed-out ones.
    pub fn compile(
        &self,
        toolkit: &Toolkit,
        request: &CompileRequest,
        cancel: &CancelFlag,
    ) -> Result<Arc<CompileOutput>, CompileError> {
        if let Some(hit) = self.get(toolkit, request) {
            return Ok(hit);
        }
        let key = CacheKey::new(toolkit, request);
        let output = toolkit.compile(request, cancel)?;
        if !output.success {
            // A failure may come from a header that is missing or broken, and the
            // dependency list of a failed run can be incomplete: never kept.
            return Ok(Arc::new(output));
        }
        let mut cached = output.clone();
        cached.from_cache = true;
        let entry = Entry::new(Arc::new(cached));
        if let Some(dir) = &self.dir {
            let stored = Stored {
                headers: &entry.headers,
                output: &entry.output,
            };
            if let Ok(json) = serde_json::to_string(&stored) {
                let _ = std::fs::create_dir_all(dir);
                let tmp = dir.join(format!("{}.json.tmp{}", key.hex(), std::process::id()));
                if std::fs::write(&tmp, json).is_ok() {
                    let _ = std::fs::rename(&tmp, dir.join(format!("{}.json", key.hex())));
                }
            }
        }
        self.insert_memory(key, entry);
        Ok(Arc::new(output))
    }

    /// Forgets everything: in memory, and the `.json` entries of the folder.
    pub fn clear(&self) {
        let mut m = self.lock();
        m.map.clear();
        m.order.clear();
        if let Some(Ok(entries)) = self.dir.as_ref().map(std::fs::read_dir) {
            for e in entries.filter_map(Result::ok) {
                if e.path().extension().is_some_and(|x| x == "json") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    /// How many compilations are held in memory.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether nothing is held in memory.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn remove(&self, key: CacheKey) {
        let mut m = self.lock();
        m.map.remove(&key);
        m.order.retain(|k| *k != key);
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_file(dir.join(format!("{}.json", key.hex())));
        }
    }

    fn insert_memory(&self, key: CacheKey, entry: Entry) {
        let mut m = self.lock();
        if m.map.insert(key, entry).is_none() {
            m.order.push_back(key);
        }
        while m.order.len() > self.capacity {
            if let Some(old) = m.order.pop_front() {
                m.map.remove(&old);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
