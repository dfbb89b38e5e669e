import { isServiceError } from '../errors/index.js';

/** The `ServiceError` a call was refused with (status, code, sentence); fails when it succeeded or threw anything else. */
export async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await call;
  } catch (error) {
    if (isServiceError(error)) return { status: error.status, code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the call succeeded');
}
