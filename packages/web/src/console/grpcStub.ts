// What the generated message files need of @grpc/grpc-js at load time, in a browser: they build Node
// client classes from it, which the console never uses (it speaks the Connect protocol over fetch).
export const makeGenericClientConstructor = () => class {};
export const status = {};
