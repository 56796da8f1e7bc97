import { pino, type Logger } from 'pino';

/** Paths pino blanks in every log line: credentials must never reach a log. */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["api-key"]',
  '*.apiKey',
  '*.awsSecretAccessKey',
  '*.serviceAccountJson',
  'apiKey',
  'key',
];

export function createLogger(level = process.env.SVC_LOG_LEVEL ?? 'info', service: 'proxy' | 'controlplane' = 'proxy'): Logger {
  return pino(
    { level, base: { svc: service }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    pino.destination({ fd: 2, sync: false }),
  );
}

export type { Logger };
