import { test } from 'vitest'
import type { FilterParameters } from '@bloomkit/core'
import { bitStoreSuite } from '@bloomkit/core/testing'
import { createRedisBitStore, openRedisBitStore } from './support/store-factory.js'
import { bothDeployments } from './support/clients.js'

const { redis: standalone, cluster } = bothDeployments()

// Default tuning: the suite's batches mostly read and OR its small shards whole.
bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(standalone, parameters), name: 'RedisBitStore (standalone)', reopen: (store) => openRedisBitStore(standalone, store), share: (store) => openRedisBitStore(standalone, store), timeout: 20_000 })
bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(cluster, parameters), name: 'RedisBitStore (Cluster)', reopen: (store) => openRedisBitStore(cluster, store), share: (store) => openRedisBitStore(cluster, store), timeout: 20_000 })
// BITFIELD per bit only, as for batches spread thinly over large shards.
const bitfieldOnly = { scanBytesPerKey: 0, blockReads: false }
bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(standalone, parameters, bitfieldOnly), name: 'RedisBitStore (standalone, BITFIELD only)', reopen: (store) => openRedisBitStore(standalone, store, bitfieldOnly), share: (store) => openRedisBitStore(standalone, store, bitfieldOnly), timeout: 20_000 })
bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(cluster, parameters, bitfieldOnly), name: 'RedisBitStore (Cluster, BITFIELD only)', reopen: (store) => openRedisBitStore(cluster, store, bitfieldOnly), share: (store) => openRedisBitStore(cluster, store, bitfieldOnly), timeout: 20_000 })
// Block reads: the suite's parameters in the blocked layout (its shards are whole blocks); keys
// whose positions do not share a block (the suite picks some at random) still go per bit.
const blocked = (parameters: FilterParameters): FilterParameters => ({ ...parameters, layout: 'blocked', scheme: 2 })
const blockReads = { scanBytesPerKey: 0 }
bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(standalone, blocked(parameters), blockReads), name: 'RedisBitStore (standalone, block reads)', reopen: (store) => openRedisBitStore(standalone, store, blockReads), share: (store) => openRedisBitStore(standalone, store, blockReads), timeout: 20_000 })
bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(cluster, blocked(parameters), blockReads), name: 'RedisBitStore (Cluster, block reads)', reopen: (store) => openRedisBitStore(cluster, store, blockReads), share: (store) => openRedisBitStore(cluster, store, blockReads), timeout: 20_000 })
