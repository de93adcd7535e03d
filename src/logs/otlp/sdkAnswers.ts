/**
 * What the collector answered to an export through the OpenTelemetry JS exporters (`http/json`,
 * `grpc`). Those exporters report every 2xx (every gRPC OK) as a success whatever came back: an answer
 * that does not decode is a diagnostic line, a partial success a log line. To read the answer as the
 * `http/protobuf` sink does (answer.ts), the sink takes the place of the response decoder of the
 * exporter's export delegate (`_delegate._serializer.deserializeResponse` in the pinned 0.301
 * exporters; a test holds it to them): it is handed the raw bytes of every successful answer, in the
 * same turn as the exporter's callback. An exporter of another shape is used as it is, its successes
 * taken on trust.
 */

interface Serializer {
  serializeRequest(request: unknown): unknown;
  deserializeResponse(data: Uint8Array): unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

function isSerializer(v: unknown): v is Serializer {
  return (
    isObject(v) && typeof v.serializeRequest === "function" && typeof v.deserializeResponse === "function"
  );
}

/** The answers of one exporter: the bytes of the last successful answer, taken once. */
export class AnswerTap {
  private last: Uint8Array | undefined;

  /** The body of the answer the exporter read since the last call; undefined when it read none. */
  take(): Uint8Array | undefined {
    const answer = this.last;
    this.last = undefined;
    return answer;
  }

  put(answer: Uint8Array): void {
    this.last = answer;
  }
}

const taps = new WeakMap<object, AnswerTap | null>();

/** The tap on this exporter's answers (one per exporter), or undefined when it has no delegate to tap. */
export function answerTap(exporter: object): AnswerTap | undefined {
  const known = taps.get(exporter);
  if (known !== undefined) return known ?? undefined;
  const delegate = (exporter as { _delegate?: unknown })._delegate;
  const serializer = isObject(delegate) ? delegate._serializer : undefined;
  if (!isObject(delegate) || !isSerializer(serializer)) {
    taps.set(exporter, null);
    return undefined;
  }
  const tap = new AnswerTap();
  // The serializer is the exporter package's shared object: the delegate gets a wrapper instead. It
  // decodes nothing: the sink reads the bytes itself (and says what a partial success rejected).
  const wrapper: Serializer = {
    serializeRequest: (request) => serializer.serializeRequest(request),
    deserializeResponse: (data) => {
      tap.put(data);
      return {};
    },
  };
  delegate._serializer = wrapper;
  taps.set(exporter, tap);
  return tap;
}
