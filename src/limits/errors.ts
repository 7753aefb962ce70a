import { EXIT, IbatchError } from '../shared/index.js';

/** An acquire on (or pending when) a gate was closed: the run is shutting down. */
export class GateClosedError extends IbatchError {
  constructor() {
    super(
      'gate_closed',
      'The rate gate was closed while a request waited for it',
      EXIT.interrupted,
    );
  }
}
