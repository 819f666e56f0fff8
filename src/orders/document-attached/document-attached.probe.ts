/**
 * Did an upload take effect? The payment's `files` (GET paymentStatus) answer: a file the
 * bridge does not know (not in its `documents` table) with the document's name (and its
 * type and size, where Payflow shows them) is the one uploaded: adopted. The spec shows no
 * field of `files[]` but `id` (the client reads them leniently): when an unknown file has
 * no name, or `files` is absent, Payflow's state cannot tell, and the call stays in doubt.
 */
import type { PayflowDocument, PaymentStatus } from '../../payflow/payflow.types.js';
import type { ProbeVerdict } from '../engine/command-spec.js';

export interface UploadedDocument {
  readonly fileName: string;
  readonly contentType: string;
  /** Decoded bytes. */
  readonly size: number;
}

export function documentAttachedVerdict(
  status: PaymentStatus,
  document: UploadedDocument,
  knownPayflowIds: ReadonlySet<string>,
): ProbeVerdict<PayflowDocument> {
  const read = 'GET paymentStatus';
  if (status.raw.files === undefined || status.raw.files === null) {
    return { kind: 'undecided', evidence: { read, shown: 'no files listed' } };
  }
  const unknown = status.files.filter((file) => !knownPayflowIds.has(file.id));
  const found = unknown.find(
    (file) =>
      file.fileName === document.fileName &&
      (file.contentType === undefined || file.contentType === document.contentType) &&
      (file.size === undefined || file.size === document.size),
  );
  if (found !== undefined) {
    return {
      kind: 'took_effect',
      result: {
        id: found.id,
        paymentId: found.paymentId ?? status.paymentId,
        fileName: document.fileName,
        contentType: document.contentType,
        size: found.size ?? document.size,
        uploadedAt: found.uploadedAt ?? null,
        raw: found,
      },
      evidence: { read, shown: `unknown file ${found.id} of that name` },
    };
  }
  if (unknown.some((file) => file.fileName === undefined)) {
    return {
      kind: 'undecided',
      evidence: { read, shown: `${unknown.length} unknown files, some without a name` },
    };
  }
  return {
    kind: 'not_applied',
    evidence: {
      read,
      shown: `no unknown file of that name (${status.files.length} files, ${unknown.length} unknown)`,
    },
  };
}
