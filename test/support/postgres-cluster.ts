// The throwaway cluster lives with the scripts, so benchmarks and drills start the same one.
export { createDatabase, freePort, startPostgresCluster, type PostgresCluster } from '../../scripts/postgres-cluster.js';
