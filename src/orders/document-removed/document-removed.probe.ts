/**
 * Did a document's DELETE take effect? The payment's `files` (GET paymentStatus) answer:
 * still listed → it did not, and it is sent again; not listed → it did. When `files` is
 * absent, Payflow's state cannot tell, and the call stays in doubt.
 */
import type { DeletedDocument, PaymentStatus } from '../../payflow/payflow.types.js';
import type { ProbeVerdict } from '../engine/command-spec.js';

export function documentRemovedVerdict(
  status: PaymentStatus,
  payflowDocumentId: string,
): ProbeVerdict<DeletedDocument> {
  const read = 'GET paymentStatus';
  if (status.raw.files === undefined || status.raw.files === null) {
    return { kind: 'undecided', evidence: { read, shown: 'no files listed' } };
  }
  if (status.files.some((file) => file.id === payflowDocumentId)) {
    return { kind: 'not_applied', evidence: { read, shown: `file ${payflowDocumentId} listed` } };
  }
  return {
    kind: 'took_effect',
    result: { id: payflowDocumentId, deleted: true },
    evidence: { read, shown: `file ${payflowDocumentId} not listed` },
  };
}
