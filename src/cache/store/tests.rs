use super::*;

fn key(s: &str) -> Key {
    KeyBuilder::new("test").str(s).finish()
}

#[test]
fn prune_keeps_the_most_recent_entries() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for i in 0..5 {
        store.put("big", &key(&i.to_string()), b"x").unwrap();
        // Distinct modification times, oldest first.
        let path = store.entry_path("big", &key(&i.to_string()));
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
    store.put("other", &key("o"), b"y").unwrap();
    assert_eq!(store.prune("big", 2), 3);
    let kept: Vec<bool> = (0..5)
        .map(|i| store.get("big", &key(&i.to_string())).is_some())
        .collect();
    assert_eq!(kept, [false, false, false, true, true]);
    assert!(store.get("other", &key("o")).is_some());
    assert_eq!(store.prune("missing-kind", 1), 0);
}

#[test]
fn round_trip_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("c")).unwrap();
    let k = key("a");
    assert_eq!(store.get("blob", &k), None);
    store.put("blob", &k, b"hello").unwrap();
    assert_eq!(store.get("blob", &k).as_deref(), Some(&b"hello"[..]));
    let hex = k.hex();
    let path = dir.path().join("c/blob").join(&hex[..2]).join(&hex[2..]);
    assert_eq!(fs::metadata(&path).unwrap().len(), HEADER_LEN as u64 + 5);
    store
        .put_value("val", &k, &(1u32, "x".to_string()))
        .unwrap();
    assert_eq!(
        store.get_value::<(u32, String)>("val", &k),
        Some((1, "x".to_string()))
    );
    let stats = store.stats().unwrap();
    assert_eq!(stats.entries, 2);
    assert_eq!(stats.kinds.len(), 2);
    assert_eq!(stats.kinds[0].kind, "blob");
    assert!(dir.path().join("c/CACHEDIR.TAG").exists());
    let removed = store.clear().unwrap();
    assert_eq!(removed.entries, 2);
    assert_eq!(store.stats().unwrap().entries, 0);
    assert_eq!(store.get("blob", &k), None);
}

#[test]
fn keys_depend_on_every_component() {
    let a = KeyBuilder::new("k").str("ab").str("c").finish();
    let b = KeyBuilder::new("k").str("a").str("bc").finish();
    let c = KeyBuilder::new("j").str("ab").str("c").finish();
    let d = KeyBuilder::with_versions("k", "0.0.0-other", b"")
        .str("ab")
        .str("c")
        .finish();
    assert!(a != b && a != c && a != d);
    assert_eq!(a, KeyBuilder::new("k").str("ab").str("c").finish());
    assert_eq!(a.hex().len(), 64);
}

/// Small entries are read, large ones mapped (`bytes.rs`): both are verified alike.
#[test]
fn corruption_is_detected() {
    for len in [100, 300 << 10] {
        corruption_is_detected_at(len);
    }
}

fn corruption_is_detected_at(len: usize) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let k = key("b");
    let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    store.put("blob", &k, &payload).unwrap();
    assert_eq!(store.get("blob", &k).as_deref(), Some(&payload[..]));
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(Damage, Corruption)> = vec![
        (Box::new(|f| f[HEADER_LEN + 3] ^= 1), Corruption::Checksum),
        (
            Box::new(|f| f.truncate(HEADER_LEN + 50)),
            Corruption::Length {
                header: len as u64,
                actual: 50,
            },
        ),
        (Box::new(|f| f.truncate(10)), Corruption::Truncated(10)),
        (Box::new(|f| f[0] = b'X'), Corruption::BadMagic),
        (
            Box::new(|f| f[4] = 99),
            Corruption::Version {
                found: 99,
                expected: FORMAT_VERSION,
            },
        ),
        (Box::new(|f| f[20] ^= 0xff), Corruption::KeyMismatch),
    ];
    for (i, (damage, expected)) in cases.into_iter().enumerate() {
        store.put("blob", &k, &payload).unwrap();
        let path = store.entry_path("blob", &k);
        let mut file = fs::read(&path).unwrap();
        damage(&mut file);
        fs::write(&path, &file).unwrap();
        assert_eq!(store.read("blob", &k), Err(expected));
        assert_eq!(store.get("blob", &k), None);
        assert!(!path.exists(), "a corrupt entry is deleted");
        assert_eq!(store.corrupt_entries(), 1, "reported once per entry ({i})");
    }
    // An entry that verifies but does not decode as the requested type.
    store.put("val", &k, &[0xff; 3]).unwrap();
    assert_eq!(store.get_value::<String>("val", &k), None);
    assert_eq!(store.corrupt_entries(), 2);
}

#[test]
fn refuses_foreign_directories() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    assert!(Store::open(dir.path()).is_err());
    let file = dir.path().join("notes.txt");
    assert!(Store::open(&file).is_err());
    assert!(Store::open(dir.path().join("new")).is_ok());
    assert!(
        Store::open(dir.path().join("new")).is_ok(),
        "reopening is fine"
    );
}

#[test]
fn concurrent_writers_of_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let keys: Vec<Key> = (0..20).map(|i| key(&i.to_string())).collect();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for (i, k) in keys.iter().enumerate() {
                    store.put("blob", k, &vec![i as u8; 10_000]).unwrap();
                    let got = store.get("blob", k).unwrap();
                    assert_eq!(*got, vec![i as u8; 10_000]);
                }
            });
        }
    });
    assert_eq!(store.corrupt_entries(), 0);
    let stats = store.stats().unwrap();
    assert_eq!((stats.entries, stats.temp_files), (20, 0));
}

#[test]
fn a_range_is_read_without_the_rest_and_checked_against_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let k = key("pack");
    assert_eq!(store.read_range("pack", &k, 0, 1), Ok(None));
    store.put("pack", &k, b"0123456789").unwrap();
    assert_eq!(
        store.read_range("pack", &k, 3, 4).unwrap().as_deref(),
        Some(&b"3456"[..])
    );
    assert!(store.read_range("pack", &k, 8, 3).is_err(), "past the end");
    assert!(store.read_range("pack", &k, u64::MAX, 2).is_err());
    // Another key's entry in its place is refused.
    let other = key("other");
    store.put("pack", &other, b"0123456789").unwrap();
    fs::rename(
        store.entry_path("pack", &other),
        store.entry_path("pack", &k),
    )
    .unwrap();
    assert_eq!(
        store.read_range("pack", &k, 0, 2),
        Err(Corruption::KeyMismatch)
    );
    store.remove("pack", &k);
    assert_eq!(store.read_range("pack", &k, 0, 2), Ok(None));
}

/// `read_parts` checks the header — length, key, version — but leaves the payload to the
/// caller: a flipped payload byte reads, where `read` finds it corrupt. Large entries
/// (mapped) and small ones (read) alike.
#[test]
fn read_parts_checks_the_header_not_the_payload() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for len in [100usize, 1 << 20] {
        let k = key(&len.to_string());
        assert_eq!(store.read_parts("unit", &k), Ok(None));
        let payload = vec![7u8; len];
        store.put("unit", &k, &payload).unwrap();
        let path = store.entry_path("unit", &k);
        let mut bytes = fs::read(&path).unwrap();
        bytes[HEADER_LEN + len / 2] ^= 1;
        fs::write(&path, &bytes).unwrap();
        let parts = store.read_parts("unit", &k).unwrap().unwrap();
        assert_eq!(parts.len(), len);
        assert_eq!(parts[len / 2], 6);
        assert_eq!(store.read("unit", &k), Err(Corruption::Checksum));
        let moved = store.entry_path("unit", &key("moved"));
        fs::create_dir_all(moved.parent().unwrap()).unwrap();
        fs::copy(&path, &moved).unwrap();
        assert_eq!(
            store.read_parts("unit", &key("moved")).err(),
            Some(Corruption::KeyMismatch)
        );
        bytes.truncate(HEADER_LEN + len - 1);
        fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            store.read_parts("unit", &k),
            Err(Corruption::Length { .. })
        ));
    }
}

#[test]
fn compressed_kinds_are_smaller_on_disk_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let payload: Vec<u8> = (0..50_000u32)
        .flat_map(|i| (i % 97).to_le_bytes())
        .collect();
    let kind = crate::cache::COMPRESSED[0];
    store.put(kind, &key("c"), &payload).unwrap();
    store.put("plain", &key("c"), &payload).unwrap();
    let on_disk = |kind| {
        fs::metadata(store.entry_path(kind, &key("c")))
            .unwrap()
            .len()
    };
    assert!(on_disk(kind) * 4 < on_disk("plain"));
    assert_eq!(&*store.get(kind, &key("c")).unwrap(), &payload[..]);
    assert_eq!(&*store.get("plain", &key("c")).unwrap(), &payload[..]);
    let value: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    store.put_value(kind, &key("v"), &value).unwrap();
    assert_eq!(store.get_value::<Vec<u8>>(kind, &key("v")), Some(value));
}

#[test]
fn rekey_moves_an_entry_under_its_new_key_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let kind = crate::cache::COMPRESSED[0];
    let payload = vec![3u8; 10_000];
    store.put(kind, &key("old"), &payload).unwrap();
    store
        .rekey((kind, &key("old")), ("moved", &key("new")))
        .unwrap();
    assert!(!store.entry_path(kind, &key("old")).exists());
    // Read back as `moved`, a kind stored as it is: the bytes are still compressed.
    let moved = store.get("moved", &key("new")).unwrap();
    assert!(moved.len() < payload.len());
    store
        .rekey(("moved", &key("new")), (kind, &key("back")))
        .unwrap();
    assert_eq!(&*store.get(kind, &key("back")).unwrap(), &payload[..]);
    // Nothing to move: nothing happens.
    store
        .rekey((kind, &key("old")), (kind, &key("other")))
        .unwrap();
    assert!(!store.entry_path(kind, &key("other")).exists());
    // A damaged entry is removed, not moved.
    let path = store.entry_path(kind, &key("back"));
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&path, bytes).unwrap();
    store
        .rekey((kind, &key("back")), (kind, &key("again")))
        .unwrap();
    assert!(!path.exists() && !store.entry_path(kind, &key("again")).exists());
}
