// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title DemoSmartWallet
/// @notice A minimal smart-contract wallet for EIP-1271 orders on the devnet. A signature is valid iff it is a
///         65-byte ECDSA signature (r ‖ s ‖ v, v in {27, 28} or {0, 1}) that ecrecovers to the owner EOA. The owner can make the wallet
///         call anything (e.g. setPreSignature, approve, transfer).
contract DemoSmartWallet {
    bytes4 private constant MAGIC_VALUE = 0x1626ba7e;
    bytes4 private constant INVALID = 0xffffffff;

    address public immutable owner;

    event Executed(address indexed target, uint256 value, bytes data);

    /// @param owner_ the EOA whose signatures the wallet accepts
    /// @param spender address approved for the maximum amount on every token in `tokens` (the vault relayer)
    constructor(address owner_, address spender, address[] memory tokens) payable {
        owner = owner_;
        for (uint256 i = 0; i < tokens.length; i++) {
            (bool ok, bytes memory ret) =
                tokens[i].call(abi.encodeWithSelector(0x095ea7b3, spender, type(uint256).max));
            require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "DemoSmartWallet: approve failed");
        }
    }

    receive() external payable {}

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (v != 27 && v != 28) return INVALID;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? MAGIC_VALUE : INVALID;
    }

    function execute(address target, uint256 value, bytes calldata data) external payable returns (bytes memory) {
        require(msg.sender == owner, "DemoSmartWallet: not the owner");
        (bool ok, bytes memory ret) = target.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        emit Executed(target, value, data);
        return ret;
    }
}
