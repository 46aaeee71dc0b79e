/**
 * The port run events leave through: API Gateway's management API in AWS (`PostToConnection`,
 * functions/adapters/dashboard-poster-aws.ts), the local gateway's open sockets offline (local/websockets.ts).
 */

export interface ConnectionPoster {
  /**
   * Sends one text frame to the connection. `gone`: the connection no longer exists (API Gateway's 410
   * GoneException), so its record should go; any other failure is thrown.
   */
  post(connectionId: string, data: string): Promise<'sent' | 'gone'>;
  /**
   * Closes the connection from the server's side (its user lost access); one that no longer exists is nothing
   * to do. Any other failure is thrown.
   */
  disconnect(connectionId: string): Promise<void>;
}
