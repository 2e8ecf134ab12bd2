import type { TestProject } from 'vitest/node';
import { startPostgresCluster, type PostgresCluster } from './postgres-cluster.js';
import { testEngines } from './engines.js';

let cluster: PostgresCluster | null = null;

export async function setup(project: TestProject): Promise<void> {
  if (testEngines().includes('postgres')) {
    cluster = await startPostgresCluster();
    project.provide('pgAdminUrl', cluster.adminUrl);
  } else {
    project.provide('pgAdminUrl', '');
  }
}

export function teardown(): void {
  cluster?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}
