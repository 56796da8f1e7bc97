import { runInspection, type InspectionResult, type InspectionTask } from './task.js';

/** The Piscina entry point: inspection only, no I/O. */
export default function inspect(task: InspectionTask): InspectionResult {
  return runInspection(task);
}
