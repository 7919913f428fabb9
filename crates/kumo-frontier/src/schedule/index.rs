//! The hosts by name: a hash table of host numbers whose keys are the hosts' own names, so a
//! name is stored once (in its `Host`) and a slot costs 4 bytes. A map from name to number
//! spends 24 a slot, some 50 bytes a host at a million hosts with its spare slots.

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::Host;

#[derive(Default)]
pub(super) struct HostIndex {
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl HostIndex {
    /// The number of the host named `key`, if it has one.
    pub fn get(&self, key: &str, hosts: &[Host]) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        self.table.find(hash, |&i| &*hosts[i as usize].key == key).map(|&i| i as usize)
    }

    /// Numbers `hosts[i]` by its name, which no other host has.
    pub fn insert(&mut self, i: usize, hosts: &[Host]) {
        let i = u32::try_from(i).expect("fewer than 2^32 hosts");
        let hasher = &self.hasher;
        let hash = hasher.hash_one(&*hosts[i as usize].key);
        self.table.insert_unique(hash, i, |&j| hasher.hash_one(&*hosts[j as usize].key));
    }
}
