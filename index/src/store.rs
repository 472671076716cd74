//! Indexes that outlive a process.
//!
//! Building the index of the built-in wiki takes most of a process start (tantivy
//! tokenises and writes ~500 documents). Instead:
//!
//! - the build writes it into a folder ([`WikiIndex::write_to_dir`], run by `ide`'s
//!   build script) whose files are embedded in the binary, and a process opens it in
//!   place through [`StaticDirectory`], a read-only tantivy `Directory` over those bytes
//!   ([`WikiIndex::open_static`]): nothing is tokenised or copied at start-up;
//! - a wiki with user folders is indexed once into a cache folder named by a key of its
//!   content, and opened there (memory-mapped) by later processes
//!   ([`WikiIndex::build_cached`]).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kernaut_wiki::Wiki;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};
use tantivy::{Directory, Index};

use crate::search::{new_index, write_documents};
use crate::{IndexError, WikiIndex};

/// A read-only tantivy `Directory` over files embedded in the binary.
#[derive(Clone, Debug)]
pub struct StaticDirectory {
    files: &'static [(&'static str, &'static [u8])],
}

impl StaticDirectory {
    /// A directory holding `files` (name, bytes).
    pub fn new(files: &'static [(&'static str, &'static [u8])]) -> StaticDirectory {
        StaticDirectory { files }
    }

    fn find(&self, path: &Path) -> Option<&'static [u8]> {
        let name = path.to_str()?;
        self.files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, bytes)| *bytes)
    }
}

fn read_only(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{}: the built-in index is read-only", path.display()),
    )
}

impl Directory for StaticDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        match self.find(path) {
            Some(bytes) => Ok(Arc::new(bytes)),
            None => Err(OpenReadError::FileDoesNotExist(path.to_path_buf())),
        }
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::FileDoesNotExist(path.to_path_buf()))
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        Ok(self.find(path).is_some())
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::wrap_io_error(
            read_only(path),
            path.to_path_buf(),
        ))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.find(path)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| OpenReadError::FileDoesNotExist(path.to_path_buf()))
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(read_only(path))
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    fn acquire_lock(&self, _: &Lock) -> Result<DirectoryLock, LockError> {
        // Nothing writes here: readers need no lock.
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, _: WatchCallback) -> tantivy::Result<WatchHandle> {
        Ok(WatchHandle::empty())
    }
}

impl WikiIndex {
    /// Writes the index of `wiki` into the folder `dir` (emptied first), as the files
    /// [`WikiIndex::open_static`] reads; returns how many documents it holds. Lock files
    /// are removed.
    pub fn write_to_dir(wiki: &Wiki, dir: &Path) -> Result<usize, IndexError> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).map_err(io_error)?;
        let index = new_index(MmapDirectory::open(dir).map_err(tantivy_error)?)?;
        let docs = write_documents(&index, wiki)?;
        drop(index);
        for entry in std::fs::read_dir(dir).map_err(io_error)?.flatten() {
            if entry.file_name().to_string_lossy().ends_with(".lock") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(docs)
    }

    /// Opens an index that [`WikiIndex::write_to_dir`] wrote for the same `wiki`, from
    /// its files embedded in the binary (name, bytes), without copying them.
    pub fn open_static(
        wiki: &Wiki,
        files: &'static [(&'static str, &'static [u8])],
    ) -> Result<WikiIndex, IndexError> {
        let index = Index::open(StaticDirectory::new(files))?;
        WikiIndex::open_index(index, wiki)
    }

    /// The index of `wiki`, from `cache/index-KEY` when an earlier process wrote it there,
    /// else built, written there and opened. `key` must change whenever the pages or the
    /// indexing code do (a hash of both). When the cache folder cannot be written, the
    /// index is built in RAM.
    pub fn build_cached(wiki: &Wiki, cache: &Path, key: &str) -> Result<WikiIndex, IndexError> {
        let dir = cache.join(format!("index-{key}"));
        if let Some(w) = open_dir(&dir, wiki) {
            return Ok(w);
        }
        let tmp = cache.join(format!(".index-{key}-{}", std::process::id()));
        let written = WikiIndex::write_to_dir(wiki, &tmp).is_ok()
            && (std::fs::rename(&tmp, &dir).is_ok() || dir.join("meta.json").exists());
        let _ = std::fs::remove_dir_all(&tmp);
        match written.then(|| open_dir(&dir, wiki)).flatten() {
            Some(w) => Ok(w),
            None => WikiIndex::build(wiki),
        }
    }
}

fn open_dir(dir: &Path, wiki: &Wiki) -> Option<WikiIndex> {
    if !dir.join("meta.json").is_file() {
        return None;
    }
    let index = Index::open(MmapDirectory::open(dir).ok()?).ok()?;
    WikiIndex::open_index(index, wiki).ok()
}

fn io_error(e: io::Error) -> IndexError {
    IndexError::Tantivy(e.to_string())
}

fn tantivy_error(e: impl std::fmt::Display) -> IndexError {
    IndexError::Tantivy(e.to_string())
}

/// The files of an index folder, sorted, for a build script to embed (lock files left
/// out).
pub fn index_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".lock"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SearchOptions;

    fn wiki() -> Wiki {
        Wiki::from_files([(
            "p.md",
            "---\nid: skill-bank-conflict\ntype: skill\ntitle: Bank conflicts\n---\nShared memory bank conflicts serialize a warp's access.\n",
        )])
    }

    fn targets(w: &WikiIndex) -> Vec<String> {
        w.search("bank conflict", &SearchOptions::default())
            .iter()
            .map(|h| h.target())
            .collect()
    }

    #[test]
    fn a_cached_index_answers_like_a_fresh_one_and_is_reused() {
        let wiki = wiki();
        let cache =
            std::env::temp_dir().join(format!("kernaut-index-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&cache);
        let fresh = WikiIndex::build(&wiki).unwrap();
        let first = WikiIndex::build_cached(&wiki, &cache, "k1").unwrap();
        assert!(cache.join("index-k1/meta.json").is_file());
        let modified = std::fs::metadata(cache.join("index-k1/meta.json"))
            .unwrap()
            .modified()
            .unwrap();
        let second = WikiIndex::build_cached(&wiki, &cache, "k1").unwrap();
        let again = std::fs::metadata(cache.join("index-k1/meta.json"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(modified, again, "the second process reads the cache");
        assert_eq!(targets(&fresh), ["skill-bank-conflict"]);
        assert_eq!(targets(&first), targets(&fresh));
        assert_eq!(targets(&second), targets(&fresh));
        assert_eq!(second.num_docs(), fresh.num_docs());
        // A folder that cannot be written: built in RAM.
        let blocked = cache.join("file");
        std::fs::write(&blocked, "").unwrap();
        let ram = WikiIndex::build_cached(&wiki, &blocked, "k1").unwrap();
        assert_eq!(targets(&ram), targets(&fresh));
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn an_index_written_to_a_folder_opens_in_place_from_its_bytes() {
        let wiki = wiki();
        let dir = std::env::temp_dir().join(format!("kernaut-index-static-{}", std::process::id()));
        let docs = WikiIndex::write_to_dir(&wiki, &dir).unwrap();
        let files: Vec<(&'static str, &'static [u8])> = index_files(&dir)
            .unwrap()
            .iter()
            .map(|f| {
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                let bytes = std::fs::read(f).unwrap();
                (
                    &*Box::leak(name.into_boxed_str()),
                    &*Box::leak(bytes.into_boxed_slice()),
                )
            })
            .collect();
        assert!(files.iter().any(|(n, _)| *n == "meta.json"), "{files:?}");
        assert!(!files.iter().any(|(n, _)| n.ends_with(".lock")));
        let opened = WikiIndex::open_static(&wiki, Box::leak(files.into_boxed_slice())).unwrap();
        assert_eq!(opened.num_docs(), docs);
        assert_eq!(targets(&opened), targets(&WikiIndex::build(&wiki).unwrap()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
