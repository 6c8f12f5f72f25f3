// Preload for the conformance harness: a server.listen(port[, cb]) call without a host
// binds all interfaces; here it binds 127.0.0.1 instead, keeping the bind synchronous
// (the scenarios read server.address().port right after listen(0)).
const net = require('net');
const { TCP, constants } = process.binding('tcp_wrap');
const orig = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args.length === 1 || typeof args[1] === 'function')) {
    const handle = new TCP(constants.SERVER);
    const err = handle.bind('127.0.0.1', args[0]);
    if (err) throw new Error(`bind 127.0.0.1:${args[0]} failed (${err})`);
    return orig.call(this, handle, args[1]);
  }
  return orig.apply(this, args);
};
