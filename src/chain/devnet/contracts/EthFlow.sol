// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title EthFlow
/// @notice Sells native ETH through CoW Protocol: a user pays ETH in with `createOrder`, this contract owns the
///         resulting GPv2 sell order of the wrapped native token (EIP-1271, validTo 2^32 - 1) and announces it with
///         `OrderPlacement`; solvers call `wrapAll()` before the trade; `invalidateOrder` hands back the unfilled ETH
///         (the creator at any time, anyone once the user's deadline has passed).
///         ABI-compatible with the production eth-flow contract: same selectors, struct layouts, events and errors.
///         The devnet's WETH9 has no payable fallback, so wrapping calls `deposit()`.
contract EthFlow {
    /// The order a user places (the `createOrder` / `invalidateOrder` argument).
    struct Data {
        address buyToken;
        address receiver;
        uint256 sellAmount;
        uint256 buyAmount;
        bytes32 appData;
        uint256 feeAmount;
        uint32 validTo;
        bool partiallyFillable;
        int64 quoteId;
    }

    /// What is kept per order digest: who placed it (0: unknown, all 0xff: invalidated) and the user's deadline.
    struct OnchainData {
        address owner;
        uint32 validTo;
    }

    /// A GPv2 order, as the settlement hashes it (tuple order = ABI order).
    struct GPv2Order {
        address sellToken;
        address buyToken;
        address receiver;
        uint256 sellAmount;
        uint256 buyAmount;
        uint32 validTo;
        bytes32 appData;
        uint256 feeAmount;
        bytes32 kind;
        bool partiallyFillable;
        bytes32 sellTokenBalance;
        bytes32 buyTokenBalance;
    }

    enum OnchainSigningScheme {
        Eip1271,
        PreSign
    }

    struct OnchainSignature {
        OnchainSigningScheme scheme;
        bytes data;
    }

    event OrderPlacement(address indexed sender, GPv2Order order, OnchainSignature signature, bytes data);
    event OrderInvalidation(bytes orderUid);
    event OrderRefund(bytes orderUid, address indexed refunder);

    error IncorrectEthAmount();
    error NotAllowedZeroSellAmount();
    error OrderIsAlreadyExpired();
    error OrderIsAlreadyOwned(bytes32 orderHash);
    error ReceiverMustBeSet();
    error NotAllowedToInvalidateOrder(bytes32 orderHash);
    error EthTransferFailed();

    bytes4 private constant EIP1271_MAGIC = 0x1626ba7e;
    bytes4 private constant EIP1271_INVALID = 0xffffffff;
    uint32 private constant NEVER_EXPIRES = type(uint32).max;
    address private constant INVALIDATED = address(type(uint160).max);

    bytes32 private constant ORDER_TYPEHASH = keccak256(
        "Order(address sellToken,address buyToken,address receiver,uint256 sellAmount,uint256 buyAmount,uint32 validTo,bytes32 appData,uint256 feeAmount,string kind,bool partiallyFillable,string sellTokenBalance,string buyTokenBalance)"
    );
    bytes32 private constant KIND_SELL = keccak256("sell");
    bytes32 private constant BALANCE_ERC20 = keccak256("erc20");

    address public immutable cowSwapSettlement;
    address public immutable wrappedNativeToken;
    bytes32 private immutable settlementDomainSeparator;

    mapping(bytes32 => OnchainData) public orders;

    constructor(address settlement, address wrappedNative) {
        cowSwapSettlement = settlement;
        wrappedNativeToken = wrappedNative;
        settlementDomainSeparator = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("Gnosis Protocol"),
                keccak256("v2"),
                block.chainid,
                settlement
            )
        );
        address relayer = abi.decode(call(settlement, 0, abi.encodeWithSignature("vaultRelayer()")), (address));
        bytes memory approved = call(wrappedNative, 0, abi.encodeWithSignature("approve(address,uint256)", relayer, type(uint256).max));
        require(approved.length == 0 || abi.decode(approved, (bool)), "EthFlow: approve failed");
    }

    /// Refunds unwrap WETH, which sends ETH here with a 2,300 gas stipend: nothing may happen in here.
    receive() external payable {}

    function createOrder(Data calldata order) external payable returns (bytes32 orderHash) {
        if (msg.value != order.sellAmount + order.feeAmount) revert IncorrectEthAmount();
        if (order.sellAmount == 0) revert NotAllowedZeroSellAmount();
        if (order.validTo < block.timestamp) revert OrderIsAlreadyExpired();

        GPv2Order memory gpv2 = toGPv2Order(order);
        emit OrderPlacement(
            msg.sender,
            gpv2,
            OnchainSignature(OnchainSigningScheme.Eip1271, abi.encodePacked(address(this))),
            abi.encodePacked(order.quoteId, order.validTo)
        );

        orderHash = digestOf(gpv2);
        if (orders[orderHash].owner != address(0)) revert OrderIsAlreadyOwned(orderHash);
        orders[orderHash] = OnchainData(msg.sender, order.validTo);
    }

    function invalidateOrder(Data calldata order) external {
        (bool allowed, bytes32 orderHash) = invalidate(order);
        if (!allowed) revert NotAllowedToInvalidateOrder(orderHash);
    }

    /// Invalidates every order of the list this caller may invalidate, skipping the others.
    function invalidateOrdersIgnoringNotAllowed(Data[] calldata list) external {
        for (uint256 i = 0; i < list.length; i++) invalidate(list[i]);
    }

    /// EIP-1271: valid only for a stored, not invalidated order whose user deadline has not passed.
    function isValidSignature(bytes32 orderHash, bytes calldata) external view returns (bytes4) {
        OnchainData memory stored = orders[orderHash];
        if (stored.owner == address(0) || stored.owner == INVALIDATED || stored.validTo < block.timestamp) {
            return EIP1271_INVALID;
        }
        return EIP1271_MAGIC;
    }

    function wrapAll() external {
        wrap(address(this).balance);
    }

    function wrap(uint256 amount) public {
        call(wrappedNativeToken, amount, abi.encodeWithSignature("deposit()"));
    }

    function unwrap(uint256 amount) public {
        call(wrappedNativeToken, 0, abi.encodeWithSignature("withdraw(uint256)", amount));
    }

    /// Marks the order invalidated and returns its unfilled ETH to its creator, if the caller may; (false, hash) if not.
    function invalidate(Data calldata order) private returns (bool, bytes32) {
        GPv2Order memory gpv2 = toGPv2Order(order);
        bytes32 orderHash = digestOf(gpv2);
        OnchainData memory stored = orders[orderHash];
        bool tradable = stored.validTo >= block.timestamp;
        if (stored.owner == address(0) || stored.owner == INVALIDATED || (tradable && msg.sender != stored.owner)) {
            return (false, orderHash);
        }
        orders[orderHash].owner = INVALIDATED;

        bytes memory uid = abi.encodePacked(orderHash, address(this), NEVER_EXPIRES);
        if (tradable) emit OrderInvalidation(uid);
        else emit OrderRefund(uid, msg.sender);

        uint256 filled = abi.decode(call(cowSwapSettlement, 0, abi.encodeWithSignature("filledAmount(bytes)", uid)), (uint256));
        uint256 refund = order.sellAmount - filled + (order.feeAmount - (order.feeAmount * filled) / order.sellAmount);
        uint256 balance = address(this).balance;
        if (balance < refund) unwrap(refund - balance);
        (bool sent,) = payable(stored.owner).call{value: refund}("");
        if (!sent) revert EthTransferFailed();
        return (true, orderHash);
    }

    function toGPv2Order(Data calldata order) private view returns (GPv2Order memory) {
        if (order.receiver == address(0)) revert ReceiverMustBeSet();
        return GPv2Order({
            sellToken: wrappedNativeToken,
            buyToken: order.buyToken,
            receiver: order.receiver,
            sellAmount: order.sellAmount,
            buyAmount: order.buyAmount,
            validTo: NEVER_EXPIRES,
            appData: order.appData,
            feeAmount: order.feeAmount,
            kind: KIND_SELL,
            partiallyFillable: order.partiallyFillable,
            sellTokenBalance: BALANCE_ERC20,
            buyTokenBalance: BALANCE_ERC20
        });
    }

    function digestOf(GPv2Order memory o) private view returns (bytes32) {
        bytes32 structHash = keccak256(
            abi.encode(
                ORDER_TYPEHASH,
                o.sellToken,
                o.buyToken,
                o.receiver,
                o.sellAmount,
                o.buyAmount,
                o.validTo,
                o.appData,
                o.feeAmount,
                o.kind,
                o.partiallyFillable,
                o.sellTokenBalance,
                o.buyTokenBalance
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", settlementDomainSeparator, structHash));
    }

    /// A call that bubbles up the callee's revert (no interfaces here: the build writes an artifact per contract).
    function call(address target, uint256 value, bytes memory data) private returns (bytes memory result) {
        bool ok;
        (ok, result) = target.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }
}
