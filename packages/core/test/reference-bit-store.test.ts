import { test } from 'vitest'
import { bitStoreSuite, ReferenceBitStore } from '@bloomkit/core/testing'

bitStoreSuite({ test, factory: (parameters) => new ReferenceBitStore(parameters), name: 'ReferenceBitStore' })
