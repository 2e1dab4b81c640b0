import { holdRunIndexFlushForTests } from "./support/workers/run-index-flush";

holdRunIndexFlushForTests();
