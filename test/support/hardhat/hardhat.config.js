// The local chain of the ERC20 tests (`hardhat node`): nothing is compiled here (solc-js compiles the
// test token), so Hardhat never downloads a compiler.
module.exports = { networks: { hardhat: { chainId: 31337 } } };
