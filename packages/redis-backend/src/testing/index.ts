export { freePort, startRedisCluster, startRedisServer, type RedisAddress, type RedisClusterHandle, type RedisServerHandle } from './redis-servers.js'
