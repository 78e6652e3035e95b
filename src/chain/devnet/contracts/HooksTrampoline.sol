// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title HooksTrampoline (batchbook)
/// @notice Runs the app-data hooks of CoW orders inside a settlement. The settlement calls `execute` as one of its
///         pre- or post-interactions; the trampoline then calls every hook itself, so a hook never runs with the
///         settlement as `msg.sender` and can never move the settlement's token buffers. Each hook gets exactly its
///         own gas limit; a hook that reverts (or runs out of gas) is recorded as failed and does not revert the
///         settlement. One `HookExecuted` event per hook tells analytics what ran and whether it succeeded.
///         Installed on the devnet with anvil_setCode: no constructor logic, no immutables.
contract HooksTrampoline {
    /// The canonical GPv2Settlement: the only caller allowed.
    address public constant SETTLEMENT = 0x9008D19f58AAbD9eD0D60971565AA8510560ab41;

    struct Hook {
        address target;
        bytes callData;
        uint256 gasLimit;
    }

    /// @param orderUid  the order whose app data carries the hook
    /// @param hookType  0 = pre-hook, 1 = post-hook
    /// @param index     position of the hook in the order's pre or post list
    event HookExecuted(
        bytes orderUid,
        uint8 hookType,
        uint256 index,
        address indexed target,
        uint256 gasLimit,
        bool success
    );

    error NotASettlement();
    /// The transaction did not forward enough gas to give hook `index` its full gas limit.
    error NotEnoughGas(uint256 index);

    function execute(bytes calldata orderUid, uint8 hookType, Hook[] calldata hooks) external {
        if (msg.sender != SETTLEMENT) revert NotASettlement();
        for (uint256 i = 0; i < hooks.length; ++i) {
            Hook calldata hook = hooks[i];
            address target = hook.target;
            uint256 gasLimit = hook.gasLimit;
            // EIP-150 forwards at most 63/64 of what is left: make sure the hook really gets its gas limit, so a
            // solver cannot make a hook fail by starving it
            if (gasleft() < gasLimit + gasLimit / 63 + 5_000) revert NotEnoughGas(i);
            bytes memory data = hook.callData;
            bool success;
            // no return data is copied: a hook cannot make the settlement pay for a huge return buffer
            assembly {
                success := call(gasLimit, target, 0, add(data, 0x20), mload(data), 0, 0)
            }
            emit HookExecuted(orderUid, hookType, i, target, gasLimit, success);
        }
    }
}
