/**
 * The one kind of POST a viewer (read only) may send: `@OpenToViewers()` on its handler
 * (sign-out). ConsoleSessionGuard refuses every other POST to a viewer.
 */
import { SetMetadata } from '@nestjs/common';

/** Metadata key of OpenToViewers. */
export const OPEN_TO_VIEWERS = 'console:open-to-viewers';

/**
 * A POST a viewer (read only) may send too (sign-out). Every other POST of the console is
 * an action: the guard refuses it to a viewer (403, recorded, nothing changes).
 */
export const OpenToViewers = (): MethodDecorator => SetMetadata(OPEN_TO_VIEWERS, true);
