/**
 * The store's people and agents, and their credentials: `store.identities`. The records are
 * store state like annotations (changed only by these commands, so the event log says who was
 * added, signed in and revoked when); making and checking secrets is `src/auth`'s, and a
 * credential reaches the store already hashed.
 */
import { z } from 'zod'
import { AddIdentityInput, NewCredentialInput, type Credential, type Identity } from './model.js'
import { ValidationError } from './errors.js'
import type { StoreState } from './reducer.js'
import * as decide from './commands.js'

/** How the facet runs a command: validated, then decided and committed in the store's next batch (`Store`'s). */
export type RunCommand = <S extends z.ZodType, T>(name: string, schema: S, input: unknown, decideWith: (ctx: decide.DecideContext, args: z.output<S>) => decide.Verdict<T>) => Promise<T>

export class StoreIdentities {
  constructor(
    private readonly state: () => StoreState,
    private readonly command: RunCommand,
  ) {}

  // ---- queries ------------------------------------------------------------------------------

  /** People and agents, oldest first (revoked ones too, with `revokedAt`). */
  list(): Identity[] {
    return Object.values(this.state().identities).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
  }

  /** One identity by id, or undefined. */
  get(id: string): Identity | undefined {
    return typeof id === 'string' ? this.state().identities[id] : undefined
  }

  /** A working credential by id (with its hash, for the verifier; never hand it out), or undefined. */
  credential(id: string): Credential | undefined {
    const { credentials } = this.state()
    return typeof id === 'string' && Object.hasOwn(credentials, id) ? credentials[id] : undefined
  }

  /** Whether any identity (revoked or not) exists: then the server asks everyone to sign in. */
  get any(): boolean {
    for (const _ in this.state().identities) return true
    return false
  }

  // ---- commands -----------------------------------------------------------------------------

  /** Add a person or an agent, with a first credential already hashed by the caller. */
  add(input: z.input<typeof AddIdentityInput>, credential?: z.input<typeof NewCredentialInput>): Promise<decide.IdentityResult> {
    const parsedCredential = credential === undefined ? undefined : NewCredentialInput.safeParse(credential)
    if (parsedCredential && !parsedCredential.success) return Promise.reject(ValidationError.fromZod(parsedCredential.error, 'credential'))
    return this.command('addIdentity', AddIdentityInput, input, (ctx, args) => decide.addIdentity(ctx, args, parsedCredential?.data))
  }

  /** Issue one more credential (a new sign-in code, token or session) to an identity that is not revoked. */
  issueCredential(identityId: string, credential: z.input<typeof NewCredentialInput>): Promise<Credential> {
    return this.command('issueCredential', NewCredentialInput, credential, (ctx, args) => decide.issueCredential(ctx, identityId, args))
  }

  /** Exchange a one-time sign-in code (already checked by the caller) for a session credential; the code ends. */
  redeemSignIn(signInId: string, session: z.input<typeof NewCredentialInput>): Promise<{ identity: Identity; credential: Credential }> {
    return this.command('redeemSignIn', NewCredentialInput, session, (ctx, args) => decide.redeemSignIn(ctx, signInId, args))
  }

  /** End a credential (sign out); false when it was gone already. */
  endCredential(credentialId: string, reason: 'used' | 'signed_out' = 'signed_out'): Promise<boolean> {
    return this.command('endCredential', z.unknown(), {}, (ctx) => decide.endCredential(ctx, credentialId, reason))
  }

  /** Revoke a person or an agent: every credential of theirs stops working at once. */
  revoke(identityId: string): Promise<Identity> {
    return this.command('revokeIdentity', z.unknown(), {}, (ctx) => decide.revokeIdentity(ctx, identityId))
  }
}
