/**
 * The client secret. Read from `api.clientSecretFile` when there is one, again before every token
 * request, so a rotated secret (a Kubernetes Secret mounted as a file) is used without a restart.
 * Every secret seen is handed to the redactor, so none can reach a log line or an error.
 */
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import type { SecretRedactor } from "./redact.js";

export class ClientSecret {
  constructor(
    private value: string,
    private readonly file: string | undefined,
    private readonly redactor: SecretRedactor,
    private readonly logger: Logger,
  ) {
    redactor.addSecret(value);
  }

  /** The secret as last read (for the revocation at shutdown, which must not wait on a file). */
  get last(): string {
    return this.value;
  }

  /** The current secret: re-read from its file; the one read before when the file cannot be read. */
  async current(): Promise<string> {
    const file = this.file;
    if (!file) return this.value;
    try {
      // Files written by `echo` or editors end with a newline that is not part of the secret.
      const secret = (await readFile(file, "utf8")).replace(/(?:\r?\n)+$/, "");
      if (secret !== "" && secret !== this.value) {
        this.redactor.addSecret(secret);
        this.value = secret;
        this.logger.info({ file }, "the client secret file changed; using the new secret");
      }
    } catch (err) {
      this.logger.warn(
        { file, code: (err as NodeJS.ErrnoException).code },
        "cannot re-read the client secret file; using the secret read before",
      );
    }
    return this.value;
  }
}
