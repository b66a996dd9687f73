import { test } from 'vitest'
import { bitStoreSuite } from '@bloomkit/core/testing'
import { MemoryBitStore } from '@bloomkit/memory-backend'

bitStoreSuite({ test, factory: (parameters) => new MemoryBitStore(parameters), name: 'MemoryBitStore' })
